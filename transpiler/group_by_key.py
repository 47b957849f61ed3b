"""GROUP BY a table's primary key, selecting its other columns.

PostgreSQL lets a query grouped by a table's primary key select that table's other
columns (they are functionally dependent on the key): Django's `annotate(Count(...))`
sends `SELECT t.id, t.name, COUNT(c.id) FROM t LEFT JOIN c ... GROUP BY t.id`. DuckDB
refuses such columns. Adding them to GROUP BY gives the same groups (each is one value
per key), so DuckDB then accepts the query and returns PostgreSQL's rows.

Needs the catalog's primary keys (ColumnHints.primary_key). Only plain column
references of the SELECT list, HAVING and ORDER BY that are outside aggregates, window
functions and subqueries, and whose relation is known for sure, are added. Grouped
items may be columns or positions (`GROUP BY 1`, as Django sends).
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_hints import ColumnHints, scope_sources

_STOP = (exp.AggFunc, exp.Window, exp.Subquery, exp.Select)


def rewrite(tree: exp.Expr, hints: ColumnHints) -> None:
    """Apply to every grouped SELECT of `tree`, in place."""
    for select in list(tree.find_all(exp.Select)):
        if select.args.get("group") is not None:
            _select(select, hints)


def _select(select: exp.Select, hints: ColumnHints) -> None:
    group = select.args["group"]
    sources = scope_sources(select)
    aliases = {alias for alias, _ in sources}
    if len(aliases) != len(sources):
        return  # a name used twice: PostgreSQL refuses it anyway

    def owner(col: exp.Column) -> str | None:
        if col.table:
            return col.table.lower() if col.table.lower() in aliases else None
        having = []
        for alias, table in sources:
            cols = hints.columns(table) if table is not None else None
            if cols is None:
                return None  # an unknown relation may have it
            if col.name.lower() in cols:
                having.append(alias)
        return having[0] if len(having) == 1 else None

    grouped: set[tuple[str, str]] = set()
    for item in group.expressions:
        if isinstance(item, exp.Literal) and item.is_int:  # GROUP BY 1: a select item
            n = int(item.name)
            if 0 < n <= len(select.expressions):
                item = select.expressions[n - 1].unalias()
        if isinstance(item, exp.Column) and (alias := owner(item)) is not None:
            grouped.add((alias, item.name.lower()))
    keyed = set()
    for alias, table in sources:
        key = hints.primary_key(table) if table is not None else None
        if key and all((alias, c) in grouped for c in key):
            keyed.add(alias)
    if not keyed:
        return
    places: list[exp.Expr] = list(select.expressions)
    for arg in ("having", "order"):
        if select.args.get(arg) is not None:
            places.append(select.args[arg])
    for place in places:
        for col in _columns(place):
            alias = owner(col)
            if alias in keyed and (alias, col.name.lower()) not in grouped:
                grouped.add((alias, col.name.lower()))
                group.append("expressions", col.copy())


def _columns(node: exp.Expr) -> list[exp.Column]:
    """Column references under `node`, not inside aggregates, windows or subqueries."""
    found = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, exp.Column):
            found.append(item)
            continue
        if isinstance(item, _STOP):
            continue
        stack.extend(item.iter_expressions())
    return found
