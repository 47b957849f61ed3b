"""PostgreSQL's LIKE / ILIKE escape with backslash unless told otherwise; DuckDB's do not.

`name LIKE 'pg\\_%'` (what tools send for catalog lookups) means a literal underscore in
PostgreSQL; DuckDB without ESCAPE reads `\\` as an ordinary character and matches
nothing. So a pattern gets `ESCAPE '\\'` unless it is a string literal with no backslash
(nothing to escape: left as it is, which keeps DuckDB's plain-LIKE fast paths). An
explicit ESCAPE is kept; `ESCAPE ''` (escaping off) is DuckDB's default already.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.literals import string_value

LIKES = (exp.Like, exp.ILike)


def needs_escape(node: exp.Like | exp.ILike) -> bool:
    """Whether `node` is a LIKE with PostgreSQL's implicit backslash escape in effect."""
    if isinstance(node.parent, exp.Escape):
        return False
    pattern = node.expression
    text = string_value(pattern)
    if text is not None:
        return "\\" in text
    return pattern is not None and not isinstance(pattern, (exp.Null, exp.Any, exp.Array))


def rewrite(node: exp.Like | exp.ILike) -> exp.Expr:
    """Give `node` PostgreSQL's default escape character; returns what replaced it."""
    if not needs_escape(node):
        return node
    escaped = exp.Escape(this=node.copy(), expression=exp.Literal.string("\\"))
    node.replace(escaped)
    return escaped
