"""PostgreSQL array text written where an array column takes it: `INSERT INTO t (a)
VALUES ('{1,2}')`, `INSERT INTO t (a) SELECT '{1,2}'`, `UPDATE t SET a = '{3}'`,
`ON CONFLICT ... DO UPDATE SET a = '{3}'`.

PostgreSQL types the untyped literal by its target column and reads its array text;
DuckDB casts the VARCHAR and refuses ("can't be cast to INTEGER[]"). With catalog hints
saying the column is an array (ARRAY or VECTOR kind), the literal becomes a list of its
elements as strings, which DuckDB's INSERT / UPDATE casts to the column's type (as
`'{1,2}'::int[]` does, pgcompat._array_literal). Text, JSON and other columns, and
text that is not a one-dimensional array literal, are left as written.
"""

from __future__ import annotations

import re

from sqlglot import exp

from transpiler import any_array
from transpiler.column_hints import ARRAY, VECTOR, ColumnHints, table_of, written_values

_ARRAYS = (ARRAY, VECTOR)


def rewrite(tree: exp.Insert | exp.Update, hints: ColumnHints) -> None:
    for kind, value in written_values(tree, hints):
        if kind in _ARRAYS:
            _convert(value)
            _concat(value)


def _concat(value: exp.Expr) -> None:
    """`SET tags = tags || $1` (Prisma's `push`) written to an array column: PostgreSQL's
    array_cat takes a NULL array as empty, DuckDB's `||` gives NULL; list_concat skips
    NULL as PostgreSQL does (but makes NULL || NULL an empty list, not NULL)."""
    if isinstance(value, exp.DPipe):
        left, right = value.this, value.expression
        value.replace(exp.Anonymous(this="list_concat", expressions=[left, right]))
        _convert(left)  # tags || '{x}': the text is an array there too
        _convert(right)


def _convert(value: exp.Expr) -> None:
    """Replace the string literal `value` holding array text by the list of its elements."""
    if not (isinstance(value, exp.Literal) and value.is_string):
        return
    text = value.name
    if not text.lstrip().startswith("{"):
        return
    items = any_array.parse_array_literal(text)
    if items is None:
        return
    value.replace(
        exp.Array(expressions=[exp.Null() if i is None else exp.Literal.string(i) for i in items])
    )


_COMPARISONS = (exp.EQ, exp.NEQ, exp.ArrayContainsAll, exp.ArrayContainedBy, exp.ArrayOverlaps)
_SIMPLE = re.compile(r"[A-Za-z0-9_.+-]+\Z")


def rewrite_comparisons(nodes: list[exp.Expr], hints: ColumnHints) -> None:
    """`ints = '{1,2}'`, `ints @> '{1}'`, `ints && '{1,2}'`, `'{1}' <@ ints`: the array
    text becomes DuckDB's list text (`'[1, 2]'`), which DuckDB casts to the column's type
    as a string constant compared with it. Only elements that need no quoting in either
    form are converted; other text is left as written."""
    for node in nodes:
        if not isinstance(node, _COMPARISONS):
            continue
        for col, lit in ((node.this, node.expression), (node.expression, node.this)):
            if (
                isinstance(col, exp.Column)
                and isinstance(lit, exp.Literal)
                and lit.is_string
                and lit.name.lstrip().startswith("{")
                and _is_array_column(col, hints)
            ):
                items = any_array.parse_array_literal(lit.name)
                if items is not None and all(i is None or _SIMPLE.match(i) for i in items):
                    text = ", ".join("NULL" if i is None else i for i in items)
                    lit.replace(exp.Literal.string(f"[{text}]"))
                break


def _is_array_column(col: exp.Column, hints: ColumnHints) -> bool:
    table = table_of(col, hints)
    kinds = hints.columns(table) if table is not None else None
    return kinds is not None and kinds.get(col.name.lower()) in _ARRAYS
