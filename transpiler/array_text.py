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
from transpiler.column_hints import ARRAY, VECTOR, ColumnHints, table_of

_ARRAYS = (ARRAY, VECTOR)


def rewrite(tree: exp.Insert | exp.Update, hints: ColumnHints) -> None:
    if isinstance(tree, exp.Update):
        target = tree.this
        if isinstance(target, exp.Table):
            _assignments(tree.expressions, hints.columns(target.name.lower()))
        return
    target = tree.this
    names: list[str] | None = None
    if isinstance(target, exp.Schema):
        names = [c.name.lower() for c in target.expressions]
        target = target.this
    if not isinstance(target, exp.Table):
        return
    table = target.name.lower()
    kinds = hints.columns(table)
    if not kinds:
        return
    if names is None:
        order = hints.column_order(table)
        names = [c.lower() for c in order] if order is not None else None
    values = tree.expression
    if names is not None and isinstance(values, exp.Values):
        for row in values.expressions:
            items = row.expressions if isinstance(row, exp.Tuple) else [row]
            for name, item in zip(names, items, strict=False):
                if kinds.get(name) in _ARRAYS:
                    _convert(item)
    elif names is not None and isinstance(values, exp.Select):
        # INSERT INTO t (a) SELECT '{1,2}': the select list's constants take the columns'
        # types too (an alias keeps its name: the literal under it is replaced)
        for name, item in zip(names, values.expressions, strict=False):
            if kinds.get(name) in _ARRAYS:
                _convert(item.this if isinstance(item, exp.Alias) else item)
    conflict = tree.args.get("conflict")
    if isinstance(conflict, exp.OnConflict):
        _assignments(conflict.expressions or [], kinds)


def _assignments(sets: list[exp.Expr], kinds: dict[str, str] | None) -> None:
    if not kinds:
        return
    for item in sets:
        if (
            isinstance(item, exp.EQ)
            and isinstance(item.this, exp.Column)
            and kinds.get(item.this.name.lower()) in _ARRAYS
        ):
            _convert(item.expression)


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
