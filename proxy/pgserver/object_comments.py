"""COMMENT ON SCHEMA / CONSTRAINT / DATABASE / FUNCTION (the request: transpiler/object_comments.py), kept in
the registry `main.__hati_comments` with the user's tables, which pg_description reads
(proxy/db/catalog/50_functions.sql): a schema's comment by its name, a constraint's by
schema, table and constraint name, a function's by schema and name (DuckDB's oids change when the database is opened
again; a comment comes back with an object of the same name made again). Written
in the client's transaction when one is open, so a ROLLBACK takes it back (a ROLLBACK TO
a savepoint set after it is refused: the replay of the block's writes cannot redo it)."""

from __future__ import annotations

from collections.abc import Container
from typing import TYPE_CHECKING, Any

from proxy.core.names import PG_SCHEMA
from proxy.pgserver import alter_rebuild
from proxy.wire.errors import PgError
from transpiler.model import CommentCommand

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner

REGISTRY = "main.__hati_comments"


async def run(
    runner: StatementRunner,
    session: ClientSession,
    cmd: CommentCommand,
    extensions: Container[str],
) -> str:
    """`extensions`: the built-in ones (a comment on one changes nothing)."""
    if cmd.kind == "extension":
        if cmd.name not in extensions:
            raise PgError("42704", f'extension "{cmd.name}" does not exist')
        return "COMMENT"
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    if runner.txn_status == "I":
        runner.write.begin()  # a write that commits: the catalog snapshots must see it
    if in_block:  # a ROLLBACK TO replay cannot redo it: refused rather than lost
        session.savepoints.writes += 1
        session.savepoints.undoable.append("COMMENT")
    await runner.call(_run, runner.cursor, cmd, in_block)
    return "COMMENT"


def _run(cur: Any, cmd: CommentCommand, in_block: bool) -> None:
    with alter_rebuild.own_transaction(cur, in_block):
        if cmd.kind == "database":  # the one database clients see (pg_database)
            (current,) = cur.execute(f"SELECT {PG_SCHEMA}.current_database()").fetchone()
            if cmd.name != current:
                raise PgError("3D000", f'database "{cmd.name}" does not exist')
            cur.execute(f"DELETE FROM {REGISTRY} WHERE kind = 'd'")
            if cmd.text:
                cur.execute(
                    f"INSERT INTO {REGISTRY} (kind, name, description) VALUES ('d', ?, ?)",
                    [current, cmd.text],
                )
            return
        if cmd.kind == "schema":
            row = cur.execute(
                "SELECT schema_name FROM system.main.duckdb_schemas() WHERE database_name = "
                "system.main.current_database() AND lower(schema_name) = lower(?)",
                [cmd.schema],
            ).fetchone()
            if row is None:
                raise PgError("3F000", f'schema "{cmd.name}" does not exist')
            key = (row[0], None, None)
            cur.execute(f"DELETE FROM {REGISTRY} WHERE kind = 'n' AND schema_name = ?", [row[0]])
        elif cmd.kind == "function":
            key = _function(cur, cmd)
            cur.execute(
                f"DELETE FROM {REGISTRY} WHERE kind = 'f' AND schema_name = ? AND name = ?",
                [key[0], key[2]],
            )
        else:
            assert cmd.table is not None
            table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(cmd.table, cmd.schema))
            if table is None:
                raise PgError("42P01", f'relation "{cmd.table}" does not exist')
            found = cur.execute(
                "SELECT 1 FROM __hati_catalog.pg.pg_constraint WHERE conrelid = ? AND conname = ?",
                [table.oid, cmd.name],
            ).fetchone()
            if found is None:
                raise PgError(
                    "42704", f'constraint "{cmd.name}" for table "{table.name}" does not exist'
                )
            key = (table.schema, table.name, cmd.name)
            cur.execute(
                f"DELETE FROM {REGISTRY} WHERE kind = 'c' AND schema_name = ? "
                "AND table_name = ? AND name = ?",
                list(key),
            )
        # An empty comment removes it, as in PostgreSQL; a schema's is kept as NULL (public's
        # default comment is then gone too).
        if cmd.text or cmd.kind == "schema":
            cur.execute(
                f"INSERT INTO {REGISTRY} (kind, schema_name, table_name, name, description) "
                "VALUES (?, ?, ?, ?, ?)",
                [_KIND[cmd.kind], *key, cmd.text or None],
            )


_KIND = {"schema": "n", "constraint": "c", "function": "f"}


def _function(cur: Any, cmd: CommentCommand) -> tuple[str, None, str]:
    """(DuckDB schema, None, name) of the user's function a COMMENT ON FUNCTION names."""
    row = cur.execute(
        "SELECT schema_name, function_name FROM system.main.duckdb_functions() WHERE database_name = "
        "system.main.current_database() AND schema_name = coalesce(?, 'main') "
        "AND lower(function_name) = lower(?) AND function_type IN ('macro', 'table_macro') "
        "LIMIT 1",
        [cmd.schema, cmd.name],
    ).fetchone()
    if row is None:
        raise PgError("42883", f"function {cmd.name} does not exist")
    return (row[0], None, row[1])
