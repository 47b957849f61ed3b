"""`array::text` in PostgreSQL's array output form (`{1,2}`, `{"a b",NULL}`).

DuckDB casts a list to text as `[1, 2]` / `[a b, NULL]`. Where the transpiler can tell
the operand is an array (an ARRAY[...] constructor, or a column the catalog hints say is
an array, user ENUM arrays included), the cast becomes PostgreSQL's form: elements joined
by `,` in braces, NULL as `NULL`, and an element double-quoted (with `\\` and `"`
backslash-escaped) when it is empty, is `NULL` in any case, or holds a brace, quote,
comma, backslash or white space. Elements are written as DuckDB casts them to text, so
booleans read `true` / `false` (PostgreSQL: `t` / `f`) and nested lists keep DuckDB's
form; other expressions (function results, parameters) are cast by DuckDB as before.
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp

from transpiler.column_hints import ARRAY, ColumnHints, table_of

_TEMPLATE = (
    "'{' || array_to_string(list_transform(__arr, __e -> CASE WHEN __e IS NULL THEN 'NULL'"
    " WHEN CAST(__e AS VARCHAR) = '' OR lower(CAST(__e AS VARCHAR)) = 'null'"
    " OR regexp_matches(CAST(__e AS VARCHAR), '[{}\",\\\\\\s]')"
    " THEN '\"' || replace(replace(CAST(__e AS VARCHAR), '\\', '\\\\'), '\"', '\\\"') || '\"'"
    " ELSE CAST(__e AS VARCHAR) END), ',') || '}'"
)
_TEXT_TYPES = frozenset({exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR})


@lru_cache(maxsize=1)
def _template() -> exp.Expr:
    return sqlglot.parse_one(_TEMPLATE, read="duckdb")


def _is_array(node: exp.Expr, hints: ColumnHints | None) -> bool:
    if isinstance(node, exp.Array):
        return True
    if isinstance(node, exp.Column) and hints is not None:
        table = table_of(node, hints)
        kinds = hints.columns(table) if table is not None else None
        return kinds is not None and kinds.get(node.name.lower()) == ARRAY
    return False


def rewrite(tree: exp.Expr, hints: ColumnHints | None) -> None:
    """Rewrite the casts to text of array operands in `tree`, in place."""
    for cast in list(tree.find_all(exp.Cast)):
        to = cast.to
        if to is None or to.this not in _TEXT_TYPES or to.expressions:
            continue
        operand = cast.this
        if not _is_array(operand, hints):
            continue
        out = _template().copy()
        for ph in out.find_all(exp.Column):
            if ph.name == "__arr":
                ph.replace(operand.copy())
        cast.replace(exp.paren(out))
