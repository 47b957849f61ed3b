"""Timestamp strings with a space before their UTC offset, where a timestamptz is meant.

PostgreSQL reads '2026-11-28 01:05:25.675 +00:00' as a timestamptz; DuckDB takes the
part after the space for a time zone name and fails ("Unknown TimeZone '+00:00'").
Sequelize writes every Date it puts into SQL text this way (bulk INSERTs, replacements).
The offset is only glued to the time (`...675+00:00`, what DuckDB reads, the same
instant) where the string surely becomes a timestamptz: a value of an INSERT row or an
UPDATE SET for a column the catalog hints say is TIMESTAMP WITH TIME ZONE, one side of a
comparison with such a column, or a cast to timestamptz. A string going into a text
column is never touched.
"""

from __future__ import annotations

import re

from sqlglot import exp

from transpiler.column_hints import TIMESTAMPTZ, ColumnHints, table_of, written_values

_SPACED_OFFSET = re.compile(
    r"^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?) ([+-]\d\d(?::?\d\d(?::?\d\d)?)?)$"
)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def glued(text: str) -> str | None:
    """`text` with the space before its offset removed; None when it has no such form."""
    match = _SPACED_OFFSET.match(text)
    return None if match is None else match[1] + match[2]


def rewrite(tree: exp.Expr, hints: ColumnHints | None) -> None:
    if isinstance(tree, (exp.Insert, exp.Update)) and hints is not None:
        for kind, value in written_values(tree, hints):
            if kind == TIMESTAMPTZ:
                _fix(value)
    for node in list(tree.find_all(exp.Cast, *_COMPARISONS)):
        if isinstance(node, exp.Cast):
            to = node.args.get("to")
            if isinstance(to, exp.DataType) and to.this is exp.DataType.Type.TIMESTAMPTZ:
                _fix(node.this)
        elif hints is not None:
            left, right = node.this, node.expression
            if _is_timestamptz(left, hints):
                _fix(right)
            elif _is_timestamptz(right, hints):
                _fix(left)


def _is_timestamptz(node: exp.Expr, hints: ColumnHints) -> bool:
    if not isinstance(node, exp.Column):
        return False
    table = table_of(node, hints)
    cols = hints.columns(table) if table is not None else None
    return cols is not None and cols.get(node.name.lower()) == TIMESTAMPTZ


def _fix(node: exp.Expr | None) -> None:
    if isinstance(node, exp.Literal) and node.is_string:
        text = glued(node.this)
        if text is not None:
            node.replace(exp.Literal.string(text))
