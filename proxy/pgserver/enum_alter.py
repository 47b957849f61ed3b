"""ALTER TYPE on an enum: ADD VALUE [BEFORE | AFTER], RENAME VALUE, RENAME TO; DROP TYPE
of an enum columns use.

DuckDB's ENUM types are fixed once made, and a column keeps a copy of its enum's labels
(`ENUM('a', 'b')`), not the type's name. So the type is made again with the new labels
and every table column holding the old labels (also as an array) is changed to it, its
values carried over (a renamed label renamed in the rows and in a plain default), in one
transaction (the client's when one is open). Indexed columns go through the table's
rebuild around its indexes (constraint_ddl.alter_around_indexes). Two enums with the
same labels cannot be told apart (docs/compatibility.md): both types' columns change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

from proxy.pgserver import alter_rebuild, constraint_ddl
from proxy.pgserver.sequence_restart import split_name
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler.alter_type import quote
from transpiler.ddl_targets import cascades, targets
from transpiler.enum_alter import EnumAlter, new_labels, parse

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Carry out the portal's ALTER TYPE; False for one this module does not handle."""
    st = portal.statement
    assert st is not None
    request = parse(st.sql)
    if request is None:
        return False
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    notice = await runner.call(alter, runner.cursor, request, in_block)
    if notice:
        session.send_notice(notice)
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def _literal(label: str) -> str:
    return "'" + label.replace("'", "''") + "'"


def _enum_sql(labels: list[str]) -> str:
    return "ENUM(" + ", ".join(_literal(label) for label in labels) + ")"


def alter(cur: duckdb.DuckDBPyConnection, request: EnumAlter, in_block: bool) -> str | None:
    """Carry out `request`; the NOTICE to send (ADD VALUE IF NOT EXISTS of a label that
    is there), else None."""
    schema, name = split_name(request.type_name)
    row = cur.execute(
        "SELECT schema_name, type_name, labels FROM system.main.duckdb_types() WHERE logical_type = 'ENUM' "
        "AND NOT internal AND database_name = system.main.current_database() "
        "AND type_name = ? AND (? IS NULL OR schema_name = ?) ORDER BY schema_name <> 'main' "
        "LIMIT 1",
        [name, schema, schema],
    ).fetchone()
    if row is None:
        raise PgError("42704", f'type "{name}" does not exist')
    type_schema, type_name, labels = row[0], row[1], list(row[2])
    if request.action == "add" and request.label in labels:
        if request.if_not_exists:
            return f'enum label "{request.label}" already exists, skipping'
        raise PgError("42710", f'enum label "{request.label}" already exists')
    for needed in (request.neighbor, request.label if request.action == "rename_value" else None):
        if needed is not None and needed not in labels:
            raise PgError("22023", f'"{needed}" is not an existing enum label')
    if request.action == "rename_value" and request.new in labels:
        raise PgError("42710", f'enum label "{request.new}" already exists')
    if len(request.label or request.new) > 63:
        raise PgError("22023", f'invalid enum label "{request.label or request.new}"')
    target_name = request.new if request.action == "rename" else type_name
    if (
        request.action == "rename"
        and cur.execute(
            "SELECT count(*) FROM system.main.duckdb_types() WHERE database_name = system.main.current_database() "
            "AND schema_name = ? AND type_name = ?",
            [type_schema, target_name],
        ).fetchone()[0]
    ):
        raise PgError("42710", f'type "{target_name}" already exists')
    old_sql = _enum_sql(labels)
    columns = cur.execute(
        "SELECT c.schema_name, c.table_name, c.column_name, c.data_type, c.column_default "
        "FROM system.main.duckdb_columns() c JOIN system.main.duckdb_tables() t ON t.table_oid = c.table_oid "
        "WHERE c.database_name = system.main.current_database() AND c.data_type IN (?, ?)",
        [old_sql, old_sql + "[]"],
    ).fetchall()
    renamed = request.label if request.action == "rename_value" else None
    labels_after = new_labels(labels, request)
    qualified = f"{quote(type_schema)}.{quote(type_name)}"
    made = f"{quote(type_schema)}.{quote(target_name)}"
    with alter_rebuild.own_transaction(cur, in_block):
        cur.execute(f"DROP TYPE {qualified}")
        cur.execute(f"CREATE TYPE {made} AS {_enum_sql(labels_after)}")
        for col_schema, table, column, data_type, default in columns:
            value = _carried("x" if data_type.endswith("[]") else quote(column), renamed, request)
            if data_type.endswith("[]"):
                value = f"list_transform({quote(column)}, x -> {value})"
            target = f"{quote(col_schema)}.{quote(table)}"
            kind = made + ("[]" if data_type.endswith("[]") else "")
            constraint_ddl.alter_around_indexes(
                cur,
                f"ALTER TABLE {target} ALTER COLUMN {quote(column)} SET DATA TYPE {kind} "
                f"USING CAST({value} AS {kind})",
            )
            if renamed is not None and default == _literal(renamed):
                cur.execute(
                    f"ALTER TABLE {target} ALTER COLUMN {quote(column)} SET DEFAULT {_literal(request.new)}"
                )
    return None


def _carried(value: str, renamed: str | None, request: EnumAlter) -> str:
    """A value of the old type as text, a renamed label renamed."""
    text = f"{value}::VARCHAR"
    if renamed is not None:
        text = f"CASE {text} WHEN {_literal(renamed)} THEN {_literal(request.new)} ELSE {text} END"
    return f"({text})"


async def drop(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """DROP TYPE of an enum that table columns use: 2BP01 as in PostgreSQL (DuckDB would
    drop it and leave the columns with their own copy), or with CASCADE those columns
    dropped first, as PostgreSQL does. False when no column uses the types dropped: the
    statement runs as it is."""
    st = portal.statement
    assert st is not None
    await runner.take_cursor()
    cascade = cascades(st.sql)
    in_block = runner.txn_status != "I" or runner.implicit
    notices = await runner.call(_drop, runner.cursor, st.sql, cascade, in_block)
    if notices is None:
        return False
    for text in notices:
        session.send_notice(text)
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def _drop(
    cur: duckdb.DuckDBPyConnection, sql: str, cascade: bool, in_block: bool
) -> list[str] | None:
    users: list[tuple[str, str, str, str]] = []
    for t in targets(sql) or ():
        if t.action != "drop" or t.kind != "type" or t.catalog:
            continue
        row = cur.execute(
            "SELECT schema_name, type_name, labels FROM system.main.duckdb_types() WHERE logical_type = "
            "'ENUM' AND NOT internal AND database_name = system.main.current_database() AND "
            "type_name = ? AND (? = '' OR schema_name = ?) ORDER BY schema_name <> 'main' LIMIT 1",
            [t.name, t.schema, "main" if t.schema == "public" else t.schema],
        ).fetchone()
        if row is None:
            continue
        old_sql = _enum_sql(list(row[2]))
        users += [
            (row[1], *column)
            for column in cur.execute(
                "SELECT c.schema_name, c.table_name, c.column_name FROM system.main.duckdb_columns() c "
                "JOIN system.main.duckdb_tables() t ON t.table_oid = c.table_oid WHERE c.database_name = "
                "system.main.current_database() AND c.data_type IN (?, ?) ORDER BY c.table_name, "
                "c.column_index",
                [old_sql, old_sql + "[]"],
            ).fetchall()
        ]
    if not users:
        return None
    lines = [f"column {column} of table {table}" for _, _, table, column in users]
    if not cascade:
        raise PgError(
            "2BP01",
            f"cannot drop type {users[0][0]} because other objects depend on it",
            detail="\n".join(
                f"{line} depends on type {u[0]}" for line, u in zip(lines, users, strict=True)
            ),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )
    with alter_rebuild.own_transaction(cur, in_block):
        for _, schema, table, column in users:
            constraint_ddl.alter_around_indexes(
                cur, f"ALTER TABLE {quote(schema)}.{quote(table)} DROP COLUMN {quote(column)}"
            )
        cur.execute(sql)  # (DuckDB's DROP TYPE ... CASCADE: nothing else depends on it)
    if len(lines) == 1:
        return [f"drop cascades to {lines[0]}"]
    return [f"drop cascades to {len(lines)} other objects"]
