"""Constraints' names where DuckDB 1.5 has no statement (the requests:
transpiler/constraint_tokens.py). DuckDB forgets constraint names; the server keeps them
in its registry `main.__hati_constraints`, which pg_constraint, pg_indexes and the
violation messages read (proxy/pgserver/constraint_ddl.py).

ALTER TABLE ... RENAME CONSTRAINT a TO b:
- FOREIGN KEY, and a CHECK or UNIQUE named there: the registry row takes the new name;
- a DuckDB CHECK, UNIQUE or PRIMARY KEY shown under its generated name: a row is added
  naming it (a PRIMARY KEY's row is the table's one `p` row);
- a UNIQUE added by ALTER TABLE (a unique index of the constraint's name): the index is
  renamed too, as PostgreSQL renames a constraint's index with it.
Errors as PostgreSQL 15: 42P01 for a missing table (IF EXISTS: a NOTICE), 42704 for a
missing constraint, 42710 when the table has a constraint of the new name, 42P07 when an
index constraint's new name is a relation of the schema.

ALTER TABLE ... ADD [CONSTRAINT c] UNIQUE | PRIMARY KEY USING INDEX i: the unique index
becomes the constraint's and takes its name, with PostgreSQL's NOTICE that it is renamed.
A UNIQUE keeps the index (renamed); a PRIMARY KEY is DuckDB's own key, so the index makes
way for it (DuckDB has no PRIMARY KEY over an existing index).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from proxy.core.names import PG_SCHEMA
from proxy.pgserver import alter_rebuild, constraint_ddl, foreign_keys, index_rename
from proxy.pgserver.sequence_restart import split_name
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import maintenance
from transpiler.constraint_ddl import AddedConstraint, quote, renamed
from transpiler.constraint_tokens import ConstraintRename, UsingIndex, parse, using_index

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

REGISTRY = foreign_keys.REGISTRY


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Carry out the portal's RENAME CONSTRAINT or ADD ... USING INDEX; False for any other
    ALTER TABLE."""
    st = portal.statement
    assert st is not None
    request = parse(st.sql)
    attached = using_index(st.sql) if request is None else None
    if request is None and attached is None:
        return False
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    if request is not None:
        notice = await runner.call(rename, runner.cursor, request, in_block)
        notices = [notice] if notice else []
    else:
        notices = await runner.call(attach, runner.cursor, attached, in_block)
    for text in notices:
        session.send_notice(text)
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
        row = constraint_ddl.registered(cur, table, req.old)
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


async def run_index(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """ALTER INDEX ... RENAME TO of a PRIMARY KEY's or UNIQUE constraint's index: the
    constraint is renamed (its index with it), as PostgreSQL renames them together (Rails'
    `rename_table` renames `old_pkey`); False for any other ALTER INDEX."""
    st = portal.statement
    assert st is not None
    request = maintenance.index_rename(st.sql)
    if request is None:
        return False
    old, new, _ = request
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    if not await runner.call(rename_index, runner.cursor, old, new, in_block):
        return False
    foreign_keys.changed()
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def rename_index(cur: duckdb.DuckDBPyConnection, old: str, new: str, in_block: bool) -> bool:
    """Rename the constraint whose index is `old` (maybe schema-qualified) to `new`; False
    when no constraint has an index of that name."""
    schema, name = split_name(old)
    row = cur.execute(
        f"SELECT schema_name, table_name FROM {PG_SCHEMA}.__hati_index_list "
        "WHERE index_name = ? AND contype IN ('p', 'u') AND (? IS NULL OR schema_name = ?) "
        "AND database_name = system.main.current_database() "
        "ORDER BY schema_name <> 'main' LIMIT 1",
        [name, schema, schema],
    ).fetchone()
    if row is None:
        return False
    rename(cur, ConstraintRename(row[1], row[0], name, new), in_block)
    return True


def keep_names(cur: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Before `ALTER TABLE t RENAME TO u` runs: DuckDB's own PRIMARY KEY, UNIQUE and CHECK
    constraints, shown under names made from the table's name (`t_pkey`), are registered
    under those names, so they keep them after the rename as PostgreSQL's do."""
    r = renamed(sql)
    if r is None or r.new_table is None:
        return
    schema = "main" if r.schema == "public" else r.schema
    table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(r.table, schema))
    if table is None or table.temporary:
        return
    rows = cur.execute(
        f"SELECT conname, contype FROM {PG_SCHEMA}.pg_constraint WHERE conrelid = ? "
        "AND contype IN ('p', 'u', 'c')",
        [table.oid],
    ).fetchall()
    for name, kind in rows:
        if constraint_ddl.registered(cur, table, name) is None:
            _name_native(cur, table, kind, name, name)
    if rows:
        foreign_keys.changed()


def _name_native(cur: Any, table: Any, kind: str, old: str, new: str) -> None:
    """Register DuckDB's PRIMARY KEY, CHECK or UNIQUE that pg_constraint shows as `old`
    under `new` (a PRIMARY KEY's row is the table's one `p` row)."""
    row = cur.execute(
        f"SELECT c.constraint_text, c.constraint_column_names FROM {PG_SCHEMA}.pg_constraint p "
        "JOIN system.main.duckdb_constraints() c ON c.table_oid = p.conrelid "
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
        "SELECT 1 FROM system.main.duckdb_tables() WHERE database_name = $1 AND schema_name = $2 "
        "AND table_name = $3 UNION ALL SELECT 1 FROM system.main.duckdb_views() WHERE database_name = $1 "
        "AND schema_name = $2 AND view_name = $3 UNION ALL SELECT 1 FROM system.main.duckdb_indexes() "
        "WHERE database_name = $1 AND schema_name = $2 AND index_name = $3 UNION ALL "
        "SELECT 1 FROM system.main.duckdb_sequences() WHERE database_name = $1 AND schema_name = $2 "
        "AND sequence_name = $3 UNION ALL SELECT 1 FROM "
        f"{PG_SCHEMA}.__hati_index_list WHERE database_name = $1 AND schema_name = $2 "
        "AND index_name = $3",
        [table.database, table.schema, name],
    ).fetchall()
    return bool(row)


def attach(cur: duckdb.DuckDBPyConnection, req: UsingIndex, in_block: bool) -> list[str]:
    """Make the unique index `req.index` the table's UNIQUE or PRIMARY KEY constraint; the
    NOTICEs to send."""
    schema = "main" if req.schema == "public" else req.schema
    table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(req.table, schema))
    if table is None:
        if req.if_exists:
            return [f'relation "{req.table}" does not exist, skipping']
        raise PgError("42P01", f'relation "{req.table}" does not exist')
    row = cur.execute(
        "SELECT table_oid, is_unique, sql FROM system.main.duckdb_indexes() WHERE database_name = ? "
        "AND schema_name = ? AND index_name = ?",
        [table.database, table.schema, req.index],
    ).fetchone()
    if row is None:
        raise PgError("42704", f'index "{req.index}" does not exist')
    if row[0] != table.oid:
        raise PgError("42809", f'index "{req.index}" does not belong to table "{table.name}"')
    if not row[1]:
        raise PgError(
            "42809",
            f'"{req.index}" is not a unique index',
            detail="Cannot create a primary key or unique constraint using such an index.",
        )
    columns = _index_columns(cur, table, req.index)
    name = req.name or req.index
    if constraint_ddl.registered(cur, table, req.index) is not None:  # ADD UNIQUE's own index
        raise PgError("55000", f'index "{req.index}" is already associated with a constraint')
    shown = {r[0] for r in cur.execute(
        f"SELECT conname FROM {PG_SCHEMA}.pg_constraint WHERE conrelid = ?", [table.oid]
    ).fetchall()}  # fmt: skip
    if name in shown:
        raise PgError("42710", f'constraint "{name}" for relation "{table.name}" already exists')
    if name != req.index and _relation_named(cur, table, name):
        raise PgError("42P07", f'relation "{name}" already exists')
    if req.kind == "p" and "p" in {r[0] for r in cur.execute(
        f"SELECT contype FROM {PG_SCHEMA}.pg_constraint WHERE conrelid = ?", [table.oid]
    ).fetchall()}:  # fmt: skip
        raise PgError("42P16", f'multiple primary keys for table "{table.name}" are not allowed')
    notices = []
    if name != req.index:
        notices.append(
            f'ALTER TABLE / ADD CONSTRAINT USING INDEX will rename index "{req.index}" to "{name}"'
        )
    with alter_rebuild.own_transaction(cur, in_block):
        if req.kind == "u":
            if name != req.index:
                index_rename.rename(cur, f"{quote(table.schema)}.{quote(req.index)}", name, True)
            cur.execute(  # as ADD CONSTRAINT UNIQUE keeps it: the index of the constraint's name
                f"INSERT INTO {REGISTRY} (schema_name, table_name, conname, contype, columns) "
                "VALUES (?, ?, ?, 'u', ?)",
                [table.schema, table.name, name, list(columns)],
            )
        else:
            cur.execute(
                f"DROP INDEX {quote(table.database)}.{quote(table.schema)}.{quote(req.index)}"
            )
            moved = alter_rebuild.resolve_table(
                cur, alter_rebuild.TableName(table.name, table.schema)
            )
            added = AddedConstraint("p", name, columns)
            constraint_ddl.add(cur, moved or table, added, notices)
    return notices


def _index_columns(cur: Any, table: Any, index: str) -> tuple[str, ...]:
    """The index's columns, in order; 42809 for an expression or a partial index (as
    PostgreSQL refuses them for a constraint)."""
    row = cur.execute(
        f"SELECT elements FROM {PG_SCHEMA}.__hati_index_list WHERE indrelid = ? AND index_name = ?",
        [table.oid, index],
    ).fetchone()
    names = {r[0].lower(): r[0] for r in cur.execute(
        "SELECT column_name FROM system.main.duckdb_columns() WHERE table_oid = ?", [table.oid]
    ).fetchall()}  # fmt: skip
    elements = list(row[0]) if row else []
    if not elements or any(e.lower() not in names for e in elements):
        raise PgError("42809", f'index "{index}" contains expressions')
    sql = cur.execute(
        "SELECT sql FROM system.main.duckdb_indexes() WHERE table_oid = ? AND index_name = ?",
        [table.oid, index],
    ).fetchone()
    if sql and sql[0] and " WHERE " in sql[0].upper():
        raise PgError("42809", f'"{index}" is a partial index')
    return tuple(names[e.lower()] for e in elements)
