"""ALTER TABLE ... RENAME [COLUMN] / DROP COLUMN / SET | DROP NOT NULL on a table with an
index, which DuckDB 1.5 refuses ("Cannot alter entry ... because there are entries that
depend on it") and PostgreSQL runs. The table is rebuilt without its indexes, the ALTER
run, and the indexes made again, following a renamed table or column; one on a dropped
column goes, as in PostgreSQL (constraint_ddl.alter_around_indexes). All in one
transaction (the client's when one is open). A table without an index runs the ALTER as
before; inside an agent branch too (a branch copies tables on write: its own rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from proxy.execution import sql_bridge
from proxy.pgserver import alter_rebuild, constraint_ddl, fk_checks
from proxy.wire import messages as m
from transpiler.constraint_ddl import alter_target, blocked_by_indexes

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Run the portal's ALTER TABLE around the table's indexes; False when it needs no
    help (the caller runs it as before)."""
    st = portal.statement
    assert st is not None
    if not blocked_by_indexes(st.sql):
        return False
    if runner.agent is not None and sql_bridge.branch_schema(
        runner.settings.values.get("search_path", "")
    ):
        return False
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    if not await runner.call(_run, runner.cursor, st.sql, in_block, sql=st.sql):
        return False
    await fk_checks.after_ddl(runner.call, runner.cursor, st, st.sql)
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def _run(cur: duckdb.DuckDBPyConnection, sql: str, in_block: bool) -> bool:
    target = alter_target(sql)
    if target is None:
        return False
    table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(target[1], target[0]))
    if table is None:
        return False  # DuckDB says what is wrong (or IF EXISTS skips)
    indexed = cur.execute(
        "SELECT count(*) FROM system.main.duckdb_indexes() WHERE table_oid = ?", [table.oid]
    ).fetchone()
    if indexed and indexed[0]:
        with alter_rebuild.own_transaction(cur, in_block):
            constraint_ddl.alter_around_indexes(cur, sql)
        return True
    if in_block and _indexes_dropped_in_transaction(cur, table):
        # DuckDB still refuses the ALTER for an index the open transaction dropped
        # (Aerich's downgrade: `DROP INDEX ...; ALTER TABLE ... DROP COLUMN ...` in one
        # script): the table is rebuilt (with no index left to make again).
        constraint_ddl.alter_around_indexes(cur, sql, rebuild=True)
        return True
    return False


def _indexes_dropped_in_transaction(cur: duckdb.DuckDBPyConnection, table: Any) -> bool:
    """Whether the table has an index as committed (another connection's view) that the
    open transaction no longer sees."""
    if table.temporary:
        return False  # another connection cannot see a temporary table
    other = cur.cursor()
    try:
        row = other.execute(
            "SELECT count(*) FROM system.main.duckdb_indexes() WHERE database_name = ? "
            "AND schema_name = ? AND table_name = ?",
            [table.database, table.schema, table.name],
        ).fetchone()
    except duckdb.Error:
        return False
    finally:
        other.close()
    return bool(row and row[0])
