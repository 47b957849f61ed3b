"""`date - date` is an integer in PostgreSQL (days); DuckDB gives BIGINT, and has no
`date + bigint`, so `d + (d2 - d1)` (valid in PostgreSQL) fails and the result column
reports int8 instead of int4. A subtraction whose two sides are dates is cast to
INTEGER. A side is a date when the transpiler can tell: a DATE literal or cast,
CURRENT_DATE, a column the server's hints say is DATE (column_hints.table_of), or a
column of a subquery or CTE whose select list computes it from one of these."""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_hints import DATE, ColumnHints, table_of

_DEPTH = 8  # derived tables nested deeper than this are not followed


def _is_date(node: exp.Expr, hints: ColumnHints | None, depth: int = 0) -> bool:
    while isinstance(node, (exp.Paren, exp.Alias)):
        node = node.this
    if isinstance(node, exp.CurrentDate):
        return True
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.this == exp.DataType.Type.DATE
    if isinstance(node, exp.Column):
        if hints is not None:
            table = table_of(node, hints)
            cols = hints.columns(table) if table is not None else None
            if cols is not None:
                return cols.get(node.name.lower()) == DATE
        found = _derived_projection(node) if depth < _DEPTH else None
        return found is not None and _is_date(found, hints, depth + 1)
    return False


def _derived_projection(column: exp.Column) -> exp.Expr | None:
    """The select-list expression a column reads when its source is a subquery in FROM /
    JOIN or a CTE (the first branch of a set operation), else None. Unqualified, the
    scope must read that one source only."""
    select = column.find_ancestor(exp.Select)
    if select is None:
        return None
    sources = [j.this for j in select.args.get("joins") or ()]
    from_ = select.args.get("from_")
    if from_ is not None:
        sources.insert(0, from_.this)
    qualifier = column.table.lower()
    if qualifier:
        sources = [s for s in sources if s.alias_or_name.lower() == qualifier]
    if len(sources) != 1:
        return None
    source = sources[0]
    query: exp.Expr | None = None
    if isinstance(source, exp.Subquery):
        query = source.this
    elif isinstance(source, exp.Table) and not source.db:
        query = _cte_query(select, source.name.lower())
    while isinstance(query, (exp.Union, exp.Subquery)):
        query = query.this
    if not isinstance(query, exp.Select):
        return None
    name = column.name.lower()
    for projection in query.expressions:
        if projection.alias_or_name.lower() == name:
            return projection
    return None


def _cte_query(node: exp.Expr, name: str) -> exp.Expr | None:
    """The query of the nearest CTE called `name` visible from `node`."""
    current: exp.Expr | None = node
    while current is not None:
        with_ = current.args.get("with_")
        if isinstance(with_, exp.With):
            for cte in with_.expressions:
                if cte.alias_or_name.lower() == name:
                    return cte.this
        current = current.parent
    return None


def rewrite(tree: exp.Expr, hints: ColumnHints | None) -> None:
    """Cast each `date - date` in `tree` to INTEGER, in place."""
    for sub in list(tree.find_all(exp.Sub)):
        if _is_date(sub.left, hints) and _is_date(sub.right, hints):
            sub.replace(exp.cast(exp.Paren(this=sub.copy()), exp.DataType.Type.INT))
