"""Reading the trigger registry for the writes that fire triggers, and running BEFORE ROW
triggers (proxy/pgserver/triggers.py keeps them; AFTER and statement-level ones run in
proxy/pgserver/after_triggers.py, planned by proxy/db/trigger_plan.py): a statement's
INSERTs / UPDATEs / DELETEs rewritten with the triggers they fire (transpiler/trigger_rewrite.py),
read from the registry `main.__hati_triggers` through the cursor that will run it (so it
sees that session's uncommitted trigger DDL and others' committed DDL). Used by the wire
server and by the in-process executor (MCP, REST): no path writes past a trigger.

A database without triggers costs a regex test per statement once its registry was
read empty.
"""

from __future__ import annotations

import re
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

from proxy.wire.errors import PgError
from transpiler.dialects import POSTGRES
from transpiler.errors import TranspileError
from transpiler.splitter import split
from transpiler.sql_functions import REGISTRY as ROUTINES
from transpiler.trigger_ddl import BEFORE, DELETE, INSERT, ROW, UPDATE
from transpiler.trigger_rewrite import TableTriggers, Trigger, find_table, rewrite

REGISTRY = "main.__hati_triggers"
_WRITE = re.compile(r"\b(?:INSERT|UPDATE|DELETE|MERGE|COPY)\b", re.IGNORECASE)
_COPY_FROM = re.compile(r'(?is)^\s*COPY\s+(?:(?:"[^"]+"|\w+)\s*\.\s*)?("[^"]+"|\w+)[^;]*?\bFROM\b')
# cursor id -> the registry apply() read last, for load() of the same statement
_FRESH: dict[int, Any] = {}
# cursor id -> what was read while a statement's triggers run (hold / release)
_MEMO: dict[int, dict[Any, Any]] = {}
# engine id -> whether its registry may hold triggers (unknown until first read)
_ANY: dict[int, bool] = {}


def may_fire(engine: Any, sql: str) -> bool:
    """Could `sql` fire a trigger? (False: no need to read the registry.)"""
    return bool(_WRITE.search(sql)) and _ANY.get(id(engine)) is not False


def created(engine: Any) -> None:
    """A trigger was made: the registry is read again for every write."""
    _ANY[id(engine)] = True


def apply(cur: duckdb.DuckDBPyConnection, engine: Any, sql: str, around: bool = True) -> str:
    """`sql` with the triggers its statements fire applied (on the worker thread).
    `around`: the caller runs AFTER and statement-level triggers (the wire server does,
    proxy/pgserver/after_triggers.py); without it a statement firing one is refused."""
    tables = _load(cur, sql, keep=around)
    _ANY[id(engine)] = tables is not None
    if not tables:
        return sql
    try:
        chunks = split(sql, POSTGRES)
        for chunk in chunks:
            _check_copy(chunk.text, tables)
            if not around:
                _check_around(chunk.text, tables)
        parts = [rewrite(chunk.text, tables) for chunk in chunks]
    except TranspileError as exc:
        raise PgError(exc.sqlstate, exc.message) from exc
    if all(p is None for p in parts):
        return sql
    return ";\n".join(p or c.text for p, c in zip(parts, chunks, strict=True))


def apply_on(engine: Any, sql: str) -> str:
    """`apply` on a cursor of its own (the in-process executor's path)."""
    cur = engine.cursor()
    try:
        return apply(cur, engine, sql, around=False)
    finally:
        cur.close()


def _check_around(sql: str, tables: dict[str, tuple[TableTriggers, ...]]) -> None:
    """The in-process executor runs BEFORE ROW triggers only: 0A000 for a statement that
    fires an AFTER or statement-level one (never a trigger silently not run)."""
    try:
        tree = sqlglot.parse_one(sql, read=POSTGRES)
    except sqlglot.errors.SqlglotError:
        return
    for node in tree.find_all(exp.Insert, exp.Update, exp.Delete, exp.Merge):
        event = {exp.Insert: INSERT, exp.Update: UPDATE, exp.Delete: DELETE}.get(type(node), 0)
        target = node.this.this if isinstance(node.this, exp.Schema) else node.this
        found = find_table(target, tables) if isinstance(target, exp.Table) else None
        for t in found.triggers if found is not None else ():
            if (
                t.tgtype & (event or INSERT | UPDATE | DELETE)
                and t.tgtype & (ROW | BEFORE) != ROW | BEFORE
            ):
                raise PgError(
                    "0A000",
                    f'trigger "{t.name}" on "{found.table}" is an AFTER or statement-level '
                    "trigger, which this in-process path does not run: run the statement "
                    "over the PostgreSQL protocol",
                )


def _check_copy(sql: str, tables: dict[str, tuple[TableTriggers, ...]]) -> None:
    copy = _COPY_FROM.match(sql)
    if copy is None:
        return
    for found in tables.get(_fold(copy[1]), ()):
        if any(t.tgtype & INSERT for t in found.triggers):
            raise PgError(
                "0A000",
                f'COPY FROM into "{found.table}", which has INSERT triggers, is not '
                "supported: hatiproxy runs triggers on INSERT, UPDATE and DELETE "
                "statements (load with INSERT, or disable the triggers first)",
            )


def load(cur: duckdb.DuckDBPyConnection, sql: str) -> dict[str, tuple[TableTriggers, ...]] | None:
    """The enabled triggers of the tables `sql` names (None: the registry is empty), for
    the statement `apply` just prepared on `cur`: the registry it read is used once (the
    view of when the statement was prepared, as its BEFORE ROW triggers)."""
    return _load(cur, sql, _FRESH.pop(id(cur), None))


def hold(cur: duckdb.DuckDBPyConnection) -> None:
    """While a statement's triggers run (proxy/pgserver/after_triggers.py), the registry
    and the tables' columns are read once on `cur`: the bodies run no DDL."""
    _MEMO[id(cur)] = {}


def release(cur: duckdb.DuckDBPyConnection) -> None:
    _MEMO.pop(id(cur), None)


def _load(
    cur: duckdb.DuckDBPyConnection, sql: str, fresh: Any = None, keep: bool = False
) -> dict[str, tuple[TableTriggers, ...]] | None:
    """The enabled triggers of the tables `sql` names (None: the registry is empty)."""
    memo = _MEMO.get(id(cur))
    if memo is not None and "rows" in memo:
        rows, current, path = memo["rows"]
    elif fresh is not None:
        rows, current, path = fresh
    else:
        rows = cur.execute(
            f"SELECT t.schema_name, t.table_name, t.name, t.tgtype, t.columns, t.when_text, "
            f"t.enabled, r.body FROM {REGISTRY} t LEFT JOIN {ROUTINES} r ON r.schema_name = "
            "t.function_schema AND r.name = t.function_name AND r.nargs = 0 ORDER BY t.name"
        ).fetchall()
        current, path = cur.execute(
            "SELECT system.main.current_database(), current_setting('search_path')"
        ).fetchone()
        if memo is not None:
            memo["rows"] = (rows, current, path)
        if keep:
            _FRESH[id(cur)] = (rows, current, path)  # for load() of this statement, once
    if not rows:
        return None
    lowered = sql.lower()
    order = [p.strip().split(".")[-1].strip('"') for p in path.split(",") if p.strip()]
    named = {(s, t) for s, t, *_ in rows if t.lower() in lowered}
    out: dict[str, list[TableTriggers]] = {}
    for schema, table in sorted(named):
        if memo is not None and (schema, table) in memo:
            found = memo[(schema, table)]
        else:
            found = _table(cur, rows, schema, table, current, order)
            if memo is not None:
                memo[(schema, table)] = found
        if found is not None:
            out.setdefault(table.lower(), []).append(found)
    return {k: tuple(v) for k, v in out.items()}


def _table(
    cur: duckdb.DuckDBPyConnection,
    rows: list[tuple[Any, ...]],
    schema: str,
    table: str,
    current: str,
    order: list[str],
) -> TableTriggers | None:
    cols = cur.execute(
        "SELECT column_name, column_default FROM system.main.duckdb_columns() WHERE schema_name = ? "
        "AND table_name = ? AND database_name = system.main.current_database() ORDER BY column_index",
        [schema, table],
    ).fetchall()
    triggers = tuple(
        Trigger(name, tgtype, tuple(columns or ()), when, body or "")
        for s, t, name, tgtype, columns, when, enabled, body in rows
        if (s, t) == (schema, table) and enabled != "D" and body is not None
    )
    if not triggers or not cols:
        return None
    defaults = tuple(_pg_default(d) for _, d in cols)
    always = cur.execute(  # identity columns (proxy/pgserver/identity_ddl.py)
        "SELECT columns[1] FROM main.__hati_constraints WHERE contype = 'i' "
        "AND expression = 'a' AND schema_name = ? AND table_name = ?",
        [schema, table],
    ).fetchall()
    return TableTriggers(
        schema,
        table,
        tuple(c for c, _ in cols),
        defaults,
        triggers,
        tuple(c.lower() for (c,) in always),
        _first_on_path(cur, current, order or ["main"], table) == schema,
    )


def _first_on_path(
    cur: duckdb.DuckDBPyConnection, database: str, order: list[str], table: str
) -> str | None:
    """The schema an unqualified `table` is found in."""
    found = {
        s
        for (s,) in cur.execute(
            "SELECT schema_name FROM system.main.duckdb_tables() WHERE table_name = ? AND database_name = ?",
            [table, database],
        ).fetchall()
    }
    return next((s for s in order if s in found), None)


def _pg_default(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return sqlglot.transpile(text, read="duckdb", write=POSTGRES)[0]
    except sqlglot.errors.SqlglotError:
        return text


def _fold(name: str) -> str:
    return name[1:-1] if name.startswith('"') else name.lower()
