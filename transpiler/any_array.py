"""`x op ANY('{a,b,c}')`: an untyped array literal compared element by element.

PostgreSQL gives the literal the array type of the other operand (pgcli sends
`c.relkind = ANY('{r,p,f}')`). DuckDB reads the string as a string and fails. The
literal's elements become string constants compared with `x`, which DuckDB casts to
`x`'s type as PostgreSQL does with unknown literals:

- `x = ANY('{a,b}')` -> `x IN ('a', 'b')` (the same three-valued result);
- `x op ANY('{a,b}')` for another comparison -> `(x op 'a' OR x op 'b')`, when `x` is a
  column, constant or parameter (evaluating it twice changes nothing);
- `'{}'` -> FALSE.

`x = ANY(t.col)` over an array column becomes `list_contains(t.col, x)`: DuckDB plans
ANY over a list as a subquery, which it cannot put in a LEFT JOIN's ON (drizzle-kit's
`LEFT JOIN pg_attribute att ON att.attnum = ANY (con.conkey)`).

Elements follow PostgreSQL's array input syntax: separated by commas, optionally
double-quoted with backslash escapes, unquoted `NULL` is NULL. A nested (multi-
dimensional) literal or one this does not read is left as written.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.literals import string_value

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_SIMPLE = (exp.Column, exp.Literal, exp.Parameter, exp.Placeholder, exp.Null, exp.Boolean)


def parse_array_literal(text: str) -> list[str | None] | None:
    """The elements of a one-dimensional PostgreSQL array literal, None if not one."""
    body = text.strip()
    if len(body) < 2 or body[0] != "{" or body[-1] != "}":
        return None
    body = body[1:-1]
    if not body.strip():
        return []
    items: list[str | None] = []
    i, n = 0, len(body)
    while True:
        while i < n and body[i].isspace():
            i += 1
        if i < n and body[i] == '"':
            i += 1
            chars = []
            while i < n and body[i] != '"':
                if body[i] == "\\" and i + 1 < n:
                    i += 1
                chars.append(body[i])
                i += 1
            if i >= n:
                return None
            i += 1
            items.append("".join(chars))
            while i < n and body[i].isspace():
                i += 1
        else:
            start = i
            while i < n and body[i] != ",":
                if body[i] in '{}"\\':
                    return None
                i += 1
            word = body[start:i].strip()
            if not word:
                return None
            items.append(None if word.upper() == "NULL" else word)
        if i >= n:
            return items
        if body[i] != ",":
            return None
        i += 1


def rewrite(node: exp.Any) -> None:
    """Rewrite `x op ANY('{...}')` in place (see the module docstring)."""
    inner = node.this
    while isinstance(inner, exp.Paren):
        inner = inner.this
    text = string_value(inner)
    comparison = node.parent
    if (
        text is None
        and isinstance(inner, exp.Column)
        and isinstance(comparison, exp.EQ)
        and comparison.expression is node
    ):
        call = exp.Anonymous(this="list_contains", expressions=[inner, comparison.this])
        comparison.replace(call)
        return
    if text is None or not isinstance(comparison, _COMPARISONS):
        return
    if comparison.expression is not node:
        return
    items = parse_array_literal(text)
    if items is None:
        return
    left = comparison.this
    values = [exp.null() if v is None else exp.Literal.string(v) for v in items]
    if not values:
        comparison.replace(exp.false())
    elif isinstance(comparison, exp.EQ):
        comparison.replace(exp.In(this=left, expressions=values))
    elif isinstance(left, _SIMPLE):
        kind = type(comparison)
        terms = [kind(this=left.copy(), expression=value) for value in values]
        comparison.replace(exp.paren(exp.or_(*terms, copy=False), copy=False))
