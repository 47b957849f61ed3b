"""Timestamp strings PostgreSQL reads and DuckDB does not, where a timestamp is meant.

- A space before the UTC offset: PostgreSQL reads '2026-11-28 01:05:25.675 +00:00' as a
  timestamptz; DuckDB takes the part after the space for a time zone name and fails
  ("Unknown TimeZone '+00:00'"). Sequelize writes every Date it puts into SQL text this
  way (bulk INSERTs, replacements).
- No seconds before an offset or a zone: '2024-01-01 10:00+02', '... 10:00Z',
  '... 10:00 Europe/Paris' (DuckDB: "invalid timestamp field format").
The string is rewritten to the same instant in DuckDB's form (`...675+00:00`,
`10:00:00+02`) only where it surely becomes a timestamp: a value of an INSERT row or an
UPDATE SET for a column the catalog hints say is TIMESTAMP WITH TIME ZONE, one side of a
comparison with such a column, or a cast to timestamptz / timestamp. A string going into
a text column is never touched.
"""

from __future__ import annotations

import re

from sqlglot import exp

from transpiler.column_hints import TIMESTAMPTZ, ColumnHints, table_of, written_values

_ZONED = re.compile(
    r"^(\d{4}-\d\d-\d\d[ T]\d\d?:\d\d)(:\d\d(?:\.\d+)?)?"
    r"(?:( ?)([+-]\d\d?(?::?\d\d(?::?\d\d)?)?)|(Z)|( [A-Za-z][\w/+-]*))$"
)
_TIMESTAMPS = (exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMP)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def glued(text: str) -> str | None:
    """`text` in a form DuckDB reads as the same instant; None when it needs no change."""
    match = _ZONED.match(text)
    if match is None:
        return None
    time, seconds, space, offset, zulu, zone = match.groups()
    if seconds is not None and not space:
        return None  # DuckDB reads it as it is
    return time + (seconds or ":00") + (offset or zulu or zone)


def rewrite(tree: exp.Expr, hints: ColumnHints | None) -> None:
    if isinstance(tree, (exp.Insert, exp.Update)) and hints is not None:
        for kind, value in written_values(tree, hints):
            if kind == TIMESTAMPTZ:
                _fix(value)
    for node in list(tree.find_all(exp.Cast, *_COMPARISONS)):
        if isinstance(node, exp.Cast):
            to = node.args.get("to")
            if isinstance(to, exp.DataType) and to.this in _TIMESTAMPS:
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
