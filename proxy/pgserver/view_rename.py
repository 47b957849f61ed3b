"""ALTER VIEW v RENAME [COLUMN] a TO b (PostgreSQL 13+), which DuckDB 1.5 lacks, and ALTER
VIEW v RENAME TO w (also written ALTER TABLE, as PostgreSQL takes both for a view), with
the views over v following as PostgreSQL's do (they reference it by OID; DuckDB binds a
view by name when it is read). RENAME COLUMN makes the view again with its own column
list `(id, b)`; the views over it read `b` and keep their own column's name (`SELECT b
AS a`, transpiler/view_deps.with_column_renamed). RENAME TO renames the view, and the
views over it read the new name. One transaction (the client's when one is open)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.core.sqltext import quote_ident
from proxy.pgserver import alter_rebuild, set_schema, view_deps
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler.view_deps import reads_relation, with_column_renamed, with_table_renamed
from transpiler.view_rename import ViewRename, parse, with_columns

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Carry out the portal's rename of a view; False for any other statement (a table's
    rename: the caller runs it as before)."""
    st = portal.statement
    assert st is not None
    request = parse(st.sql)
    if request is None:
        return False
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    done = await runner.call(_run, runner.cursor, request, in_block, sql=st.sql)
    if done is None:
        return False
    if done:
        session.send_notice(done)
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def _run(cur: Any, req: ViewRename, in_block: bool) -> str | None:
    """ "" when done, a NOTICE when IF EXISTS skipped, None when the name is not a view's."""
    schema = "main" if req.schema == "public" else req.schema
    found = set_schema.find_relation(cur, "table" if req.as_table else "view", req.name, schema)
    if found is None or found[0] != "view":
        if found is None and not req.as_table:
            if req.if_exists:
                return f'relation "{req.name}" does not exist, skipping'
            raise PgError("42P01", f'relation "{req.name}" does not exist')
        return None  # a table, or no view: DuckDB's (and the other handlers') to answer
    _, database, where = found
    row = cur.execute(
        "SELECT sql, comment, view_oid FROM system.main.duckdb_views() WHERE database_name = ? "
        "AND schema_name = ? AND view_name = ?",
        [database, where, req.name],
    ).fetchone()
    others = view_deps.view_columns(cur, database, row[2])
    qualified = f"{quote_ident(database)}.{quote_ident(where)}.{quote_ident(req.name)}"
    with alter_rebuild.own_transaction(cur, in_block):
        if req.column is None:
            if set_schema.name_taken(cur, database, where, req.new_name):
                raise PgError("42P07", f'relation "{req.new_name}" already exists')
            cur.execute(f"ALTER VIEW {qualified} RENAME TO {quote_ident(req.new_name)}")
            for text, _ in others:
                new_sql = with_table_renamed(text or "", req.name, req.new_name, where)
                if new_sql is not None:
                    cur.execute(new_sql)
            return ""
        columns = [
            c
            for (c,) in cur.execute(
                "SELECT column_name FROM system.main.duckdb_columns() WHERE table_oid = ? "
                "ORDER BY column_index",
                [row[2]],
            ).fetchall()
        ]
        if req.column not in columns:
            raise PgError("42703", f'column "{req.column}" does not exist')
        if req.new_name in columns:
            raise PgError(
                "42701", f'column "{req.new_name}" of relation "{req.name}" already exists'
            )
        renamed = [req.new_name if c == req.column else c for c in columns]
        new_sql = with_columns(row[0] or "", columns, renamed, database, where)
        if new_sql is None:
            raise PgError(
                "0A000",
                f'cannot rename a column of view "{req.name}": its definition is not in a '
                "form the server can re-create",
            )
        cur.execute(new_sql)
        if row[1] is not None:
            cur.execute(f"COMMENT ON VIEW {qualified} IS '{row[1].replace(chr(39), chr(39) * 2)}'")
        for text, own in others:
            if reads_relation(text or "", req.name):
                over = with_column_renamed(text or "", req.name, req.column, req.new_name, own)
                if over is not None:
                    cur.execute(over)
    return ""
