"""BEFORE ROW triggers: the registry `main.__hati_triggers` (made with the catalog,
proxy/db/catalog/install.py, in the user's database, so CREATE / DROP TRIGGER are
transactional and survive restarts), the trigger DDL carried out on it
(transpiler/trigger_ddl.py), and the rewrite of each INSERT / UPDATE that fires a trigger
(transpiler/trigger_rewrite.py) before it is transpiled.

The registry is read through the session's own cursor for every write statement once a
database has triggers (it sees the session's uncommitted DDL and others' committed DDL);
a database without triggers costs a regex test per statement.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import duckdb

from proxy.db import row_triggers
from proxy.pgserver.alter_rebuild import TableName, resolve_table
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import plpgsql_trigger, trigger_ddl
from transpiler.sql_functions import REGISTRY as ROUTINES

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

REGISTRY = row_triggers.REGISTRY
COLUMNS = (
    "schema_name VARCHAR, table_name VARCHAR, name VARCHAR, function_schema VARCHAR, "
    "function_name VARCHAR, tgtype INTEGER, columns VARCHAR[], when_text VARCHAR, "
    "enabled VARCHAR"
)
FOLLOWING_TAGS = frozenset({"ALTER TABLE", "DROP TABLE", "DROP SCHEMA"})
_RENAME = re.compile(
    r'^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?((?:"[^"]+"|\w+)\s*\.\s*)?("[^"]+"|\w+)'
    r'\s+RENAME\s+TO\s+("[^"]+"|\w+)\s*;?\s*$',
    re.IGNORECASE,
)


async def prepare(runner: StatementRunner, sql: str) -> str:
    """`sql` with the BEFORE ROW triggers its INSERTs / UPDATEs fire applied (COPY FROM
    into a table with INSERT triggers is refused: 0A000)."""
    if not row_triggers.may_fire(runner.engine, sql):
        return sql
    await runner.take_cursor()
    return await runner.call(row_triggers.apply, runner.cursor, runner.engine, sql)


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> None:
    """Carry out CREATE / DROP TRIGGER or ALTER TABLE ... ENABLE / DISABLE TRIGGER."""
    st = portal.statement
    assert st is not None and st.trigger is not None
    await runner.take_cursor()
    notices: list[str] = []
    await runner.call(_run, runner.cursor, st.trigger, notices, sql=st.sql)
    if st.trigger.action == "create":
        row_triggers.created(runner.engine)
    for text in notices:
        session.send_notice(text)
    session.out(m.command_complete(st.tag))


def _run(cur: duckdb.DuckDBPyConnection, ddl: trigger_ddl.TriggerDdl, notices: list[str]) -> None:
    table = resolve_table(cur, TableName(ddl.table, ddl.schema))
    schema = table.schema if table is not None else (ddl.schema or "main")
    kind = ("TABLE",) if table is not None else None
    if kind is None:
        kind = cur.execute(
            "SELECT 'VIEW' FROM system.main.duckdb_views() WHERE view_name = ? AND NOT internal",
            [ddl.table],
        ).fetchone()
    if kind is None:
        if ddl.action == "drop" and ddl.if_exists:
            notices.append(f'relation "{ddl.table}" does not exist, skipping')
            return
        raise PgError("42P01", f'relation "{ddl.table}" does not exist')
    if kind[0] == "VIEW":
        raise PgError(
            "42809",
            f'"{ddl.table}" is a view',
            detail="Views cannot have row-level BEFORE or AFTER triggers.",
        )
    key = [schema, ddl.table, ddl.name]
    where = "schema_name = ? AND table_name = ? AND name = ?"
    exists = cur.execute(f"SELECT count(*) FROM {REGISTRY} WHERE {where}", key).fetchone()[0]
    if ddl.action == "drop":
        if not exists:
            message = f'trigger "{ddl.name}" for table "{ddl.table}" does not exist'
            if not ddl.if_exists:
                raise PgError("42704", message)
            notices.append(message + ", skipping")
        cur.execute(f"DELETE FROM {REGISTRY} WHERE {where}", key)
        return
    if ddl.action == "enable":
        if ddl.name in ("ALL", "USER"):
            cur.execute(
                f"UPDATE {REGISTRY} SET enabled = ? WHERE schema_name = ? AND table_name = ?",
                [ddl.enabled, schema, ddl.table],
            )
            return
        if not exists:
            raise PgError("42704", f'trigger "{ddl.name}" for table "{ddl.table}" does not exist')
        cur.execute(f"UPDATE {REGISTRY} SET enabled = ? WHERE {where}", [ddl.enabled, *key])
        return
    if exists and not ddl.replace:
        raise PgError("42710", f'trigger "{ddl.name}" for relation "{ddl.table}" already exists')
    function_schema = _function_schema(cur, ddl)
    if ddl.tgtype & trigger_ddl.ROW and ddl.tgtype & trigger_ddl.BEFORE:
        _check_before_row(cur, function_schema, ddl.function)
    columns = {
        c
        for (c,) in cur.execute(
            "SELECT column_name FROM system.main.duckdb_columns() WHERE schema_name = ? AND table_name = ? "
            "AND database_name = system.main.current_database()",
            [schema, ddl.table],
        ).fetchall()
    }
    for column in ddl.columns:
        if column not in columns:
            raise PgError("42703", f'column "{column}" of relation "{ddl.table}" does not exist')
    cur.execute(f"DELETE FROM {REGISTRY} WHERE {where}", key)
    cur.execute(
        f"INSERT INTO {REGISTRY} VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'O')",
        [*key, function_schema, ddl.function, ddl.tgtype, list(ddl.columns), ddl.when],
    )


def _check_before_row(cur: duckdb.DuckDBPyConnection, schema: str, name: str) -> None:
    """A BEFORE ROW trigger is rewritten into its statement: its function may not run
    SQL statements or send messages (those run in AFTER and statement-level triggers)."""
    row = cur.execute(
        f"SELECT body FROM {ROUTINES} WHERE schema_name = ? AND name = ? AND nargs = 0",
        [schema, name],
    ).fetchone()
    if row is None or row[0] is None:
        return
    refused = plpgsql_trigger.row_rewrite_refusal(plpgsql_trigger.parse_body(row[0]))
    if refused is not None:
        raise PgError(
            "0A000",
            f"{refused} in the function of a BEFORE ROW trigger are not supported: hatiproxy "
            "runs them in AFTER and FOR EACH STATEMENT triggers",
        )


def _function_schema(cur: duckdb.DuckDBPyConnection, ddl: trigger_ddl.TriggerDdl) -> str:
    schema = ddl.function_schema
    rows = cur.execute(
        f"SELECT schema_name, result_oid FROM {ROUTINES} r WHERE name = ? AND nargs = 0 "
        "AND (? IS NULL OR schema_name = ?) AND EXISTS (SELECT 1 FROM system.main.duckdb_functions() f "
        "WHERE f.schema_name = r.schema_name AND f.function_name = r.name "
        "AND f.database_name = system.main.current_database()) "
        "ORDER BY schema_name <> 'main', schema_name",
        [ddl.function, schema, schema],
    ).fetchall()
    if not rows:
        raise PgError("42883", f"function {ddl.function}() does not exist")
    if rows[0][1] != 2279:
        raise PgError("42P17", f"function {ddl.function} must return type trigger")
    return rows[0][0]


def after_ddl(cur: duckdb.DuckDBPyConnection, tag: str, sql: str) -> None:
    """A table renamed keeps its triggers; a dropped one loses them."""
    if tag == "ALTER TABLE" and (m_ := _RENAME.match(sql)) is not None:
        schema = _fold(m_[1].rstrip(". \t")) if m_[1] else None
        schema = "main" if schema in (None, "public") else schema
        cur.execute(
            f"UPDATE {REGISTRY} SET table_name = ? WHERE schema_name = ? AND table_name = ?",
            [_fold(m_[3]), schema, _fold(m_[2])],
        )
    if tag in ("DROP TABLE", "DROP SCHEMA", "ALTER TABLE"):
        cur.execute(
            f"DELETE FROM {REGISTRY} r WHERE NOT EXISTS (SELECT 1 FROM system.main.duckdb_tables() t "
            "WHERE t.schema_name = r.schema_name AND t.table_name = r.table_name "
            "AND t.database_name = system.main.current_database())"
        )


async def check_drop_function(runner: StatementRunner, session: ClientSession, sql: str) -> None:
    """DROP FUNCTION of a trigger function a trigger uses: 2BP01 (with CASCADE the
    triggers go first)."""
    if not row_triggers.may_fire(runner.engine, "UPDATE"):
        return
    await runner.take_cursor()
    notices: list[str] = []
    await runner.call(_check_drop_function, runner.cursor, sql, notices, sql=sql)
    for text in notices:
        session.send_notice(text)


def _check_drop_function(cur: duckdb.DuckDBPyConnection, sql: str, notices: list[str]) -> None:
    """DROP FUNCTION of a trigger function a trigger uses: 2BP01 (with CASCADE the
    triggers go first)."""
    found = re.match(
        r'(?is)^\s*DROP\s+FUNCTION\s+(?:IF\s+EXISTS\s+)?(?:(?:"[^"]+"|\w+)\s*\.\s*)?'
        r'("[^"]+"|\w+)\s*(?:\(\s*\))?\s*(CASCADE|RESTRICT)?\s*;?\s*$',
        sql,
    )
    if found is None:
        return
    name = _fold(found[1])
    users = cur.execute(
        f"SELECT name, table_name FROM {REGISTRY} WHERE function_name = ? ORDER BY table_name, name",
        [name],
    ).fetchall()
    if not users:
        return
    said = [f"trigger {t} on table {tb} depends on function {name}()" for t, tb in users]
    if (found[2] or "").upper() != "CASCADE":
        raise PgError(
            "2BP01",
            f"cannot drop function {name}() because other objects depend on it",
            detail="\n".join(said),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )
    for t, tb in users:
        notices.append(f"drop cascades to trigger {t} on table {tb}")
    cur.execute(f"DELETE FROM {REGISTRY} WHERE function_name = ?", [name])


_ALL_SWITCH = re.compile(
    r"\b(ENABLE|DISABLE)\s+(?:ALWAYS\s+|REPLICA\s+)?TRIGGER\s+(?:ALL|USER)\b", re.I
)


def all_switch(sql: str) -> bool | None:
    """Of `ALTER TABLE t {ENABLE | DISABLE} TRIGGER {ALL | USER}`: True for ENABLE."""
    found = _ALL_SWITCH.findall(sql)
    return found[-1].upper() == "ENABLE" if found else None


def switch_all(cur: duckdb.DuckDBPyConnection, relation: str, enable: bool) -> None:
    """ALTER TABLE t {ENABLE | DISABLE} TRIGGER {ALL | USER}: each of its triggers."""
    parts = [_fold(p.strip()) for p in relation.split(".")]
    schema = parts[-2] if len(parts) > 1 else cur.execute("SELECT current_schema()").fetchone()[0]
    cur.execute(
        f"UPDATE {REGISTRY} SET enabled = ? WHERE schema_name = ? AND table_name = ?",
        ["O" if enable else "D", "main" if schema == "public" else schema, parts[-1]],
    )


def _fold(name: str) -> str:
    return name[1:-1] if name.startswith('"') else name.lower()
