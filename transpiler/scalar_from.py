"""A function returning one value, called in FROM: PostgreSQL gives one row, its column
named after the function, or the column alias, else the table alias; DuckDB takes only
table functions there. `FROM f(...) [AS t[(c)]]` becomes `FROM (SELECT f(...) AS c) AS t`.
`SELECT * FROM current_schema()` is how TypeORM asks for the schema.
"""

from __future__ import annotations

from sqlglot import exp

# The PostgreSQL scalar functions sqlglot leaves anonymous (it types most: CurrentSchema,
# Upper, ...).
_SCALARS_IN_FROM = frozenset(
    {
        "pg_backend_pid",
        "pg_listening_channels",  # a set (an unnest in its macro): one row per channel
        "txid_current",
        "current_setting",
        "current_schemas",
        "inet_server_addr",
        "inet_server_port",
        "inet_client_addr",
        "inet_client_port",
        "pg_is_in_recovery",
        "pg_postmaster_start_time",
        "clock_timestamp",
        "statement_timestamp",
        "transaction_timestamp",
        "timeofday",
        "gen_random_uuid",
        "uuid_generate_v4",
    }
)
_TABLE_VALUED = (exp.UDTF, exp.GenerateSeries, exp.ReadCSV, exp.ReadParquet, exp.JSONTable)


def _scalar_call(fn: exp.Expr) -> bool:
    if isinstance(fn, exp.Anonymous):
        return fn.name.lower() in _SCALARS_IN_FROM
    return isinstance(fn, exp.Func) and not isinstance(fn, _TABLE_VALUED)


def _wrap(node: exp.Table) -> None:
    """`FROM f(...) [AS t[(c)]]` as `FROM (SELECT f(...) AS c) AS t`: PostgreSQL names the
    column c, else t, else the function."""
    fn = node.this
    alias = node.args.get("alias")
    if isinstance(fn, exp.Anonymous):
        name = fn.name.lower()
    elif isinstance(fn, exp.CurrentTimestamp):
        name = "now"  # the one spelling PostgreSQL accepts in FROM
    else:
        name = fn.sql(dialect="postgres").split("(")[0].strip().lower()
    column = name
    if alias is not None and alias.columns:
        column = alias.columns[0].name
    elif alias is not None and alias.name:
        column = alias.name
    # the call itself moves (not a copy): the rewrite loop still visits it
    query = exp.Select(
        expressions=[exp.Alias(this=fn, alias=exp.to_identifier(column, quoted=True))]
    )
    table = alias.name if alias is not None and alias.name else name
    node.replace(
        exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(table, quoted=True)))
    )


def rewrite(nodes: list[exp.Expr]) -> None:
    """Wrap every scalar call in FROM among `nodes` (a pre-order snapshot), in place."""
    for node in nodes:
        if isinstance(node, exp.Table) and _scalar_call(node.this):
            _wrap(node)
