"""An INSERT without a column list that supplies fewer values than the table has columns:
Postgres fills the first N columns and gives the rest their defaults; DuckDB refuses
("table t has 3 columns but 2 values were supplied"). With the table's declared columns
from catalog hints, `INSERT INTO t VALUES (1, 'a')` runs as `INSERT INTO t (id, note)
VALUES (1, 'a')`; likewise for `INSERT INTO t SELECT ...`.

Left as written (so DuckDB's own error or result stands): a table the hints do not know,
a query whose width is unknown (`SELECT *`), VALUES rows of differing lengths, too many
values, DuckDB's `BY NAME`, and `DEFAULT VALUES`.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_hints import ColumnHints


def rewrite(tree: exp.Insert, hints: ColumnHints) -> None:
    target = tree.this
    if not isinstance(target, exp.Table) or tree.args.get("by_name"):
        return
    columns = hints.column_order(target.name.lower())
    width = _width(tree.expression)
    if columns is None or width is None or not 0 < width < len(columns):
        return
    names = [exp.to_identifier(c, quoted=True) for c in columns[:width]]
    tree.set("this", exp.Schema(this=target, expressions=names))


def _width(query: exp.Expr | None) -> int | None:
    """How many columns `query` (VALUES or a query) yields, None when not known here."""
    if isinstance(query, exp.Subquery):
        return _width(query.this)
    if isinstance(query, exp.SetOperation):
        return _width(query.this)
    if isinstance(query, exp.Values):
        widths = {
            len(row.expressions) if isinstance(row, exp.Tuple) else 1 for row in query.expressions
        }
        return widths.pop() if len(widths) == 1 else None
    if isinstance(query, exp.Select):
        items = query.expressions
        if any(isinstance(e, exp.Star) or isinstance(e.this, exp.Star) for e in items):
            return None
        return len(items)
    return None
