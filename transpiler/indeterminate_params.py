"""Parameters whose type PostgreSQL cannot determine: 42P18.

A `$n` the client sends untyped (oid 0) takes its type from where it stands. Where it
stands only as an argument of a function declared `"any"` (pg_typeof, concat, concat_ws
and format past their first argument, num_nulls, num_nonnulls, count) or as the operand of
IS [NOT] NULL / IS [NOT] DISTINCT FROM NULL, nothing types it and PostgreSQL refuses the
Parse with `could not determine data type of parameter $n`; DuckDB would quietly take
text. A `$n` that also stands anywhere else is typed there and is not reported. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlglot import exp
from sqlglot.errors import SqlglotError

from transpiler.dialects import POSTGRES

_ANY_FUNCTIONS = ("pg_typeof", "num_nulls", "num_nonnulls")
# Cheap test before parsing: only a statement naming one of these places can hold one.
_MAYBE = re.compile(
    r"\b(?:pg_typeof|concat|concat_ws|format|num_nulls|num_nonnulls)\s*\(|count\s*\(\s*\$\d"
    r"|\$\d+\s*\)?\s*IS\s+(?:NOT\s+)?(?:NULL|DISTINCT)",
    re.IGNORECASE,
)


def _number(node: exp.Expr) -> int | None:
    if isinstance(node, exp.Parameter) and node.this is not None and node.this.name.isdigit():
        return int(node.this.name)
    return None


def _untyped_place(node: exp.Expr) -> bool:
    """True when `node` (a $n) stands where nothing gives it a type."""
    parent = node.parent
    while isinstance(parent, exp.Paren):
        node, parent = parent, parent.parent
    if isinstance(parent, exp.Concat):
        return True
    if isinstance(parent, exp.ConcatWs):
        return parent.expressions.index(node) > 0 if node in parent.expressions else False
    if isinstance(parent, exp.Format):
        return node is not parent.this
    if isinstance(parent, exp.Count):
        return node is parent.this
    if isinstance(parent, exp.Anonymous):
        return parent.name.lower() in _ANY_FUNCTIONS and node in parent.expressions
    if isinstance(parent, exp.Is | exp.NullSafeEQ | exp.NullSafeNEQ):
        other = parent.expression if node is parent.this else parent.this
        return isinstance(other, exp.Null)
    return False


def indeterminate(sql: str) -> list[int]:
    """The $n of `sql` that nothing types (see above), in order; [] when unsure."""
    if "$" not in sql or not _MAYBE.search(sql):
        return []
    try:
        trees = [t for t in POSTGRES.parse(sql) if t is not None]
    except SqlglotError:
        return []
    if len(trees) != 1:
        return []
    untyped: dict[int, bool] = {}
    for node in trees[0].find_all(exp.Parameter):
        n = _number(node)
        if n is not None:
            untyped[n] = untyped.get(n, True) and _untyped_place(node)
    return sorted(n for n, only in untyped.items() if only)


def untyped_param(sql: str, oids: Sequence[int]) -> int | None:
    """The first $n nothing types that the client sent untyped (oid 0), or None."""
    if 0 not in oids:
        return None
    return next((n for n in indeterminate(sql) if n <= len(oids) and oids[n - 1] == 0), None)
