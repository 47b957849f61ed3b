"""ALTER TABLE ... DROP COLUMN that DuckDB 1.5 refuses and PostgreSQL runs: a PRIMARY KEY,
UNIQUE or CHECK constraint uses the column ("Cannot drop column "id" because there is a
UNIQUE constraint that depends on it"), a key covers a column after it ("an index depends
on a column after it!", so any table with a UNIQUE column after the one dropped: Django's
RemoveField, Rails' remove_column), or the table has an index. PostgreSQL drops the
constraints and indexes that use the column with it (a key's other columns stay NOT
NULL); here the table is rebuilt without the column (constraint_ddl.drop_columns: rows,
other constraints, indexes, comments, owned sequences kept), in one transaction (the
client's when one is open). Any other DROP COLUMN runs as before; inside an agent branch
too (a branch copies tables on write: its own rules)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.execution import sql_bridge
from proxy.pgserver import alter_rebuild, constraint_ddl, fk_checks
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler.drop_column import DropColumns, dropped_columns

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Run the portal's ALTER TABLE ... DROP COLUMN as a rebuild when DuckDB would refuse
    it; False when it needs no help (the caller runs it as before)."""
    st = portal.statement
    assert st is not None
    drop = dropped_columns(st.sql)
    if drop is None:
        return False
    if runner.agent is not None and sql_bridge.branch_schema(
        runner.settings.values.get("search_path", "")
    ):
        return False
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    notices = await runner.call(_run, runner.cursor, drop, in_block, sql=st.sql)
    if notices is None:
        return False
    for text in notices:
        session.send_notice(text)
    await fk_checks.after_ddl(runner.call, runner.cursor, st, st.sql)
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def _run(cur: Any, drop: DropColumns, in_block: bool) -> list[str] | None:
    """The NOTICEs when done (IF EXISTS of a missing column); None when not ours."""
    table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(drop.table, drop.schema))
    if table is None:
        return None  # DuckDB says what is wrong (or IF EXISTS skips)
    positions = dict(
        cur.execute(
            "SELECT lower(column_name), column_index - 1 FROM system.main.duckdb_columns() WHERE table_oid = ?",
            [table.oid],
        ).fetchall()
    )
    names = frozenset(c.lower() for c in drop.columns)
    missing = [c for c in drop.columns if c.lower() not in positions]
    if len(drop.columns) == 1 and missing:  # PostgreSQL's words (DuckDB's lack the table)
        text = f'column "{missing[0]}" of relation "{table.name}" does not exist'
        if drop.if_exists:
            return [f"{text}, skipping"]
        raise PgError("42703", text)
    if missing or names == positions.keys():
        return None  # DuckDB's answer (a table keeps one column there)
    if not blocked(cur, table.oid, names, positions):
        return None
    with alter_rebuild.own_transaction(cur, in_block):
        constraint_ddl.drop_columns(cur, table, names)
    return []


def blocked(cur: Any, oid: int, names: frozenset[str], positions: dict[str, int]) -> bool:
    """Whether DuckDB would refuse dropping the columns `names` of the table `oid`."""
    if cur.execute(
        "SELECT count(*) FROM system.main.duckdb_indexes() WHERE table_oid = ?", [oid]
    ).fetchone()[0]:
        return True
    first = min(positions[n] for n in names)
    for kind, columns in cur.execute(
        "SELECT constraint_type, list_transform(constraint_column_names, c -> lower(c)) "
        "FROM system.main.duckdb_constraints() WHERE table_oid = ? "
        "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'CHECK')",
        [oid],
    ).fetchall():
        if names & set(columns):
            return True
        if kind != "CHECK" and any(positions.get(c, -1) > first for c in columns):
            return True
    return False
