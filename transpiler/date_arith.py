"""`date - date` is an integer in PostgreSQL (days); DuckDB gives BIGINT, and has no
`date + bigint`, so `d + (d2 - d1)` (valid in PostgreSQL) fails and the result column
reports int8 instead of int4. A subtraction whose two sides are dates is cast to
INTEGER. A side is a date when the transpiler can tell: a DATE literal or cast,
CURRENT_DATE, or a column the server's hints say is DATE (column_hints.table_of)."""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_hints import DATE, ColumnHints, table_of


def _is_date(node: exp.Expr, hints: ColumnHints | None) -> bool:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.CurrentDate):
        return True
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.this == exp.DataType.Type.DATE
    if isinstance(node, exp.Column) and hints is not None:
        table = table_of(node, hints)
        cols = hints.columns(table) if table is not None else None
        return cols is not None and cols.get(node.name.lower()) == DATE
    return False


def rewrite(tree: exp.Expr, hints: ColumnHints | None) -> None:
    """Cast each `date - date` in `tree` to INTEGER, in place."""
    for sub in list(tree.find_all(exp.Sub)):
        if _is_date(sub.left, hints) and _is_date(sub.right, hints):
            sub.replace(exp.cast(exp.Paren(this=sub.copy()), exp.DataType.Type.INT))
