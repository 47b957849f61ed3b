"""ALTER TABLE ... RENAME CONSTRAINT a TO b, which DuckDB 1.5 lacks (the request:
transpiler/constraint_rename.py). DuckDB forgets constraint names; the server keeps them
in its registry `main.__hati_constraints`, which pg_constraint, pg_indexes and the
violation messages read (proxy/pgserver/constraint_ddl.py):

- FOREIGN KEY, and a CHECK or UNIQUE named there: the registry row takes the new name;
- a DuckDB CHECK, UNIQUE or PRIMARY KEY shown under its generated name: a row is added
  naming it (a PRIMARY KEY's row is the table's one `p` row);
- a UNIQUE added by ALTER TABLE (a unique index of the constraint's name): the index is
  renamed too, as PostgreSQL renames a constraint's index with it.

Errors as PostgreSQL 15: 42P01 for a missing table (IF EXISTS: a NOTICE), 42704 for a
missing constraint, 42710 when the table has a constraint of the new name, 42P07 when an
index constraint's new name is a relation of the schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from proxy.core.names import PG_SCHEMA
from proxy.pgserver import alter_rebuild, foreign_keys, index_rename
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler.constraint_ddl import quote
from transpiler.constraint_rename import ConstraintRename, parse

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

REGISTRY = foreign_keys.REGISTRY


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Carry out the portal's RENAME CONSTRAINT; False for any other ALTER TABLE."""
    st = portal.statement
    assert st is not None
    request = parse(st.sql)
    if request is None:
        return False
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    notice = await runner.call(rename, runner.cursor, request, in_block)
    if notice:
        session.send_notice(notice)
    foreign_keys.changed()
    runner.param_types.invalidate()
    session.out(m.command_complete("ALTER TABLE"))
    return True


def rename(cur: duckdb.DuckDBPyConnection, req: ConstraintRename, in_block: bool) -> str | None:
    """Rename the constraint; the NOTICE when IF EXISTS skips a missing table."""
    schema = "main" if req.schema == "public" else req.schema
    table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(req.table, schema))
    if table is None:
        if req.if_exists:
            return f'relation "{req.table}" does not exist, skipping'
        raise PgError("42P01", f'relation "{req.table}" does not exist')
    shown = dict(
        cur.execute(
            f"SELECT conname, contype FROM {PG_SCHEMA}.pg_constraint WHERE conrelid = ?",
            [table.oid],
        ).fetchall()
    )
    kind = shown.get(req.old)
    if kind is None:
        raise PgError("42704", f'constraint "{req.old}" for table "{table.name}" does not exist')
    # An index's constraint renames its index first: the schema's relation names first.
    if kind in ("p", "u") and req.new != req.old and _relation_named(cur, table, req.new):
        raise PgError("42P07", f'relation "{req.new}" already exists')
    if req.new in shown and req.new != req.old:
        raise PgError("42710", f'constraint "{req.new}" for relation "{table.name}" already exists')
    with alter_rebuild.own_transaction(cur, in_block):
        row = _registered(cur, table, req.old)
        if row is not None and kind == "u" and row[1] is None:  # ALTER TABLE's unique index
            index_rename.rename(cur, f"{quote(table.schema)}.{quote(req.old)}", req.new, True)
        if row is not None:
            cur.execute(
                f"UPDATE {REGISTRY} SET conname = ? WHERE schema_name = ? AND table_name = ? "
                "AND conname = ?",
                [req.new, table.schema, table.name, req.old],
            )
        else:  # DuckDB's own, under the name pg_constraint generates for it
            _name_native(cur, table, kind, req.old, req.new)
    return None


def _registered(cur: Any, table: Any, name: str) -> tuple[str, str | None] | None:
    row = cur.execute(
        f"SELECT contype, expression FROM {REGISTRY} WHERE schema_name = ? AND table_name = ? "
        "AND conname = ?",
        [table.schema, table.name, name],
    ).fetchone()
    return (row[0], row[1]) if row else None


def _name_native(cur: Any, table: Any, kind: str, old: str, new: str) -> None:
    """Register DuckDB's PRIMARY KEY, CHECK or UNIQUE that pg_constraint shows as `old`
    under `new` (a PRIMARY KEY's row is the table's one `p` row)."""
    row = cur.execute(
        f"SELECT c.constraint_text, c.constraint_column_names FROM {PG_SCHEMA}.pg_constraint p "
        "JOIN duckdb_constraints() c ON c.table_oid = p.conrelid "
        "AND p.oid = (1073741824 + c.table_oid * 1024 + 2 * c.constraint_index + 1) "
        "WHERE p.conrelid = ? AND p.conname = ?",
        [table.oid, old],
    ).fetchone()
    if row is None:  # pg_constraint listed it a moment ago
        raise PgError("XX000", f'constraint "{old}" of table "{table.name}" not found')
    text, columns = row
    if kind == "p":
        cur.execute(
            f"DELETE FROM {REGISTRY} WHERE schema_name = ? AND table_name = ? AND contype = 'p'",
            [table.schema, table.name],
        )
    cur.execute(
        f"INSERT INTO {REGISTRY} (schema_name, table_name, conname, contype, columns, "
        "expression) VALUES (?, ?, ?, ?, ?, ?)",
        [table.schema, table.name, new, kind, list(columns or ()), text],
    )


def _relation_named(cur: Any, table: Any, name: str) -> bool:
    """A table, view, index or sequence of that name in the table's schema (PostgreSQL
    renames the constraint's index, and relations share one name space)."""
    row = cur.execute(
        "SELECT 1 FROM duckdb_tables() WHERE database_name = $1 AND schema_name = $2 "
        "AND table_name = $3 UNION ALL SELECT 1 FROM duckdb_views() WHERE database_name = $1 "
        "AND schema_name = $2 AND view_name = $3 UNION ALL SELECT 1 FROM duckdb_indexes() "
        "WHERE database_name = $1 AND schema_name = $2 AND index_name = $3 UNION ALL "
        "SELECT 1 FROM duckdb_sequences() WHERE database_name = $1 AND schema_name = $2 "
        "AND sequence_name = $3 UNION ALL SELECT 1 FROM "
        f"{PG_SCHEMA}.__hati_index_list WHERE database_name = $1 AND schema_name = $2 "
        "AND index_name = $3",
        [table.database, table.schema, name],
    ).fetchall()
    return bool(row)
