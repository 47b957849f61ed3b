"""ALTER INDEX ... RENAME TO, which DuckDB 1.5 lacks: the index is dropped and created
again under the new name from its own definition (on its table, fully qualified), its
comment kept, in one transaction (the client's when one is open). The index of a PRIMARY
KEY or UNIQUE constraint is DuckDB's own and cannot be renamed this way (0A000).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

from proxy.pgserver import alter_rebuild
from proxy.pgserver.sequence_restart import split_name
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import table_ddl
from transpiler.alter_type import quote
from transpiler.maintenance import index_rename

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Run the portal's ALTER INDEX ... RENAME; False for any other ALTER INDEX."""
    st = portal.statement
    assert st is not None
    request = index_rename(st.sql)
    if request is None:
        return False
    old, new, if_exists = request
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    if not await runner.call(rename, runner.cursor, old, new, in_block):
        shown = old.replace('"', "")
        if not if_exists:
            raise PgError("42P01", f'relation "{shown}" does not exist')
        session.send_notice(f'relation "{shown}" does not exist, skipping')
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def rename(cur: duckdb.DuckDBPyConnection, old: str, new: str, in_block: bool) -> bool:
    """Rename index `old` (a name as written, maybe schema-qualified) to `new`; False
    when there is no such index."""
    schema, name = split_name(old)
    row = cur.execute(
        "SELECT database_name, schema_name, table_name, sql, comment FROM system.main.duckdb_indexes() "
        "WHERE index_name = ? AND (? IS NULL OR schema_name = ?) "
        "AND database_name = system.main.current_database() ORDER BY schema_name <> 'main' LIMIT 1",
        [name, schema, schema],
    ).fetchone()
    if row is None:
        owned = cur.execute(
            "SELECT count(*) FROM __hati_catalog.pg.__hati_index_list WHERE index_name = ? "
            "AND contype IS NOT NULL",
            [name],
        ).fetchone()
        if owned and owned[0]:
            raise PgError(
                "0A000",
                f'cannot rename index "{name}": it belongs to a PRIMARY KEY or UNIQUE constraint, '
                "whose index DuckDB keeps itself",
            )
        return False
    database, schema_name, table, sql, comment = row
    qualified = f"{quote(database)}.{quote(schema_name)}.{quote(table)}"
    create = table_ddl.index_on(table_ddl.rename_index(sql or "", new), qualified)
    if create is None:
        raise PgError(
            "0A000",
            f'cannot rename index "{name}": its definition is not one the server can re-create',
        )
    with alter_rebuild.own_transaction(cur, in_block):
        cur.execute(f"DROP INDEX {quote(database)}.{quote(schema_name)}.{quote(name)}")
        cur.execute(create)
        if comment is not None:
            literal = "'" + comment.replace("'", "''") + "'"
            cur.execute(
                f"COMMENT ON INDEX {quote(database)}.{quote(schema_name)}.{quote(new)} IS {literal}"
            )
    return True
