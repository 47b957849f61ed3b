"""Number the name of an unnamed `CREATE INDEX ON t (...)` as PostgreSQL does.

The transpiler gives such an index PostgreSQL's name, `t_a_idx` (see
transpiler/create_index.py); when a relation of that name already exists in the
table's schema, PostgreSQL takes `t_a_idx1`, `t_a_idx2`, ... instead. Only the server
sees the catalog, so the choice is made here, just before DuckDB runs the statement.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from transpiler.create_index import index_name

if TYPE_CHECKING:
    from proxy.pgserver.contexts import StatementRunner
    from transpiler import Statement

# Index names share one namespace per schema with tables, views and sequences; the
# schema is the table's (any schema holding a table of that name when not written; in any
# attached database: current_database() is PostgreSQL's stand-in on a client's cursor).
_TAKEN = """
SELECT lower(name) FROM (
    SELECT schema_name, table_name AS name FROM system.main.duckdb_tables()
    UNION ALL SELECT schema_name, view_name FROM system.main.duckdb_views()
    UNION ALL SELECT schema_name, index_name FROM system.main.duckdb_indexes()
    UNION ALL SELECT schema_name, sequence_name FROM system.main.duckdb_sequences()
) WHERE schema_name IN (
    SELECT schema_name FROM system.main.duckdb_tables()
    WHERE lower(table_name) = lower($table)
        AND ($schema IS NULL OR lower(schema_name) = lower($schema))
)
"""
_MAX_TRIES = 1000


async def choose(runner: StatementRunner, st: Statement) -> Statement:
    """`st` with its generated index name numbered if that name is taken."""
    auto = st.index_name
    if auto is None:
        return st
    await runner.take_cursor()
    cur = runner.cursor

    def taken() -> set[str]:
        return {
            row[0]
            for row in cur.execute(_TAKEN, {"table": auto.table, "schema": auto.schema}).fetchall()
        }

    names = await runner.call(taken)
    chosen = auto.chosen
    number = 0
    while chosen.lower() in names and number < _MAX_TRIES:
        number += 1
        chosen = index_name(auto.table, auto.columns, number)
    if chosen == auto.chosen:
        return st
    old, new = _quoted(auto.chosen), _quoted(chosen)
    return replace(st, sql=st.sql.replace(old, new, 1), index_name=replace(auto, chosen=chosen))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
