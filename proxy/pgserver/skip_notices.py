"""The NOTICEs PostgreSQL sends when `IF [NOT] EXISTS` skips an object: CREATE TABLE /
INDEX / SEQUENCE IF NOT EXISTS on an existing relation (42P07 `relation "t" already
exists, skipping`), CREATE SCHEMA IF NOT EXISTS (42P06), DROP ... IF EXISTS of a missing
table, view, index, sequence, schema, type or function (00000 `table "t" does not exist,
skipping`; `schema "s" does not exist, skipping` when a qualified name's schema is
missing), ALTER ... IF EXISTS of a missing relation. DuckDB skips these silently; psql
shows the notices and migration tools (Alembic, Flyway) log them.

`notices(cur, st, search_path)` runs on the session's cursor before the statement, so it
sees the objects as the statement will: a DROP finds the session's temporary objects
first, then the search path; a CREATE looks where it creates. Statements the server
carries out itself (constraint DDL, materialized views, ALTER COLUMN TYPE rebuilds) send
their own notices and never reach this.
"""

from __future__ import annotations

import dataclasses
import re

import duckdb

from proxy.access.system_objects import user_database
from proxy.access.table_limits import search_schemas
from transpiler import Statement
from transpiler.ddl_targets import Target, targets

# The object kind a statement's tag is about: a CREATE TABLE's serial sequences
# (CREATE SEQUENCE IF NOT EXISTS t_id_seq before it) are not the client's words.
_TAG_KINDS = {
    "CREATE TABLE": ("table",),
    "SELECT": ("table",),  # CREATE TABLE IF NOT EXISTS ... AS
    "CREATE TABLE AS": ("table",),
    "CREATE INDEX": ("index",),
    "CREATE SEQUENCE": ("sequence",),
    "CREATE SCHEMA": ("schema",),
    "DROP TABLE": ("table",),
    "DROP VIEW": ("view",),
    "DROP INDEX": ("index",),
    "DROP SEQUENCE": ("sequence",),
    "DROP SCHEMA": ("schema",),
    "DROP TYPE": ("type",),
    "DROP FUNCTION": ("function",),
    "DROP MACRO": ("function",),
    "ALTER TABLE": ("relation",),
    "ALTER VIEW": ("view",),
    "ALTER SEQUENCE": ("sequence",),
    "ALTER INDEX": ("index",),
}
_RELATIONS = (
    "SELECT 1 FROM system.main.duckdb_tables() WHERE database_name = $1 AND schema_name = $2 "
    "AND lower(table_name) = $3 UNION ALL SELECT 1 FROM system.main.duckdb_views() "
    "WHERE database_name = $1 AND schema_name = $2 AND lower(view_name) = $3 AND NOT internal"
)
_EXISTS = {
    "table": _RELATIONS,  # DuckDB's CREATE TABLE IF NOT EXISTS skips a view of the name too
    "relation": _RELATIONS,
    "view": "SELECT 1 FROM system.main.duckdb_views() WHERE database_name = $1 AND schema_name = $2 "
    "AND lower(view_name) = $3 AND NOT internal",
    "sequence": "SELECT 1 FROM system.main.duckdb_sequences() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(sequence_name) = $3",
    "index": "SELECT 1 FROM system.main.duckdb_indexes() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(index_name) = $3",
    "function": "SELECT 1 FROM system.main.duckdb_functions() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(function_name) = $3 AND function_type IN ('macro', "
    "'table_macro') LIMIT 1",
    "type": "SELECT 1 FROM system.main.duckdb_types() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(type_name) = $3 AND NOT internal LIMIT 1",
}
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
_SCHEMA = "SELECT 1 FROM system.main.duckdb_schemas() WHERE database_name = $1 AND lower(schema_name) = $2"


def may_skip(st: Statement) -> bool:
    """Cheap test before any catalog look-up: a DDL statement that says IF [NOT] EXISTS."""
    return st.kind == "ddl" and st.tag in _TAG_KINDS and " IF " in st.sql.upper()


def notices(
    cur: duckdb.DuckDBPyConnection, st: Statement, search_path: str | None
) -> tuple[list[tuple[str, str]], bool]:
    """(message, SQLSTATE) of each object `st` will skip, in the statement's order, and
    whether it skips every object it names: then nothing is to run, as in PostgreSQL (an
    ALTER SEQUENCE IF EXISTS of a missing sequence does not reach DuckDB, which might
    refuse its options; a skipped CREATE TABLE makes no serial sequence)."""
    kinds = _TAG_KINDS.get(st.tag, ())
    out: list[tuple[str, str]] = []
    db = user_database(cur)
    named = 0
    for t in targets(st.sql) or ():
        if t.kind not in kinds:
            continue
        named += 1
        if not t.if_exists or t.catalog not in ("", db):
            continue
        if t.schema == "public":
            t = dataclasses.replace(t, schema="main")
        name = _as_written(st.sql, t.name)
        if t.action == "create":
            if _exists_for_create(cur, t, db, search_path):
                if t.kind == "schema":
                    out.append((f'schema "{name}" already exists, skipping', "42P06"))
                else:
                    out.append((f'relation "{name}" already exists, skipping', "42P07"))
        elif t.action in ("drop", "alter", "rename"):
            missing = _missing(cur, t, db, search_path)
            if missing is not None:
                out.append((missing.replace(f'"{t.name}"', f'"{name}"', 1), "00000"))
    return out, bool(out) and len(out) == named


def _as_written(sql: str, name: str) -> str:
    """`name` (lower-cased by ddl_targets) as the statement spells it: a quoted
    identifier keeps its case, as in PostgreSQL's messages."""
    for quoted in _QUOTED.findall(sql):
        text = quoted.replace('""', '"')
        if text.lower() == name:
            return text
    return name


def _exists_for_create(
    cur: duckdb.DuckDBPyConnection, t: Target, db: str, search_path: str | None
) -> bool:
    if t.kind == "schema":
        return _schema_exists(cur, db, t.name)
    if t.temporary:
        return _found(cur, t.kind, "temp", "main", t.name)
    if t.kind == "index" and t.on_table is not None:  # in its table's schema
        schema = t.on_table[1] or _table_schema(cur, t.on_table[2], db, search_path)
        return schema is not None and _found(cur, "index", db, schema, t.name)
    return _found(cur, t.kind, db, t.schema or search_schemas(search_path)[0], t.name)


def _missing(
    cur: duckdb.DuckDBPyConnection, t: Target, db: str, search_path: str | None
) -> str | None:
    """The notice for a missing object; None when the statement will find it."""
    if t.kind == "schema":
        return (
            None
            if _schema_exists(cur, db, t.name)
            else f'schema "{t.name}" does not exist, skipping'
        )
    if t.schema and not _schema_exists(cur, db, t.schema):
        return f'schema "{t.schema}" does not exist, skipping'
    if t.schema:
        places = [(db, t.schema)]
    else:
        places = [("temp", "main")] + [(db, s) for s in search_schemas(search_path)]
    if any(_found(cur, t.kind, d, s, t.name) for d, s in places):
        return None
    if t.action != "drop":  # ALTER TABLE / VIEW / SEQUENCE / INDEX IF EXISTS
        return f'relation "{t.name}" does not exist, skipping'
    if t.kind == "function":  # (PostgreSQL shows the argument types written: f(text))
        return f"function {t.name}() does not exist, skipping"
    return f'{t.kind} "{t.name}" does not exist, skipping'


def _found(cur: duckdb.DuckDBPyConnection, kind: str, db: str, schema: str, name: str) -> bool:
    return bool(cur.execute(_EXISTS[kind], [db, schema, name]).fetchall())


def _schema_exists(cur: duckdb.DuckDBPyConnection, db: str, name: str) -> bool:
    schema = "main" if name == "public" else name
    return bool(cur.execute(_SCHEMA, [db, schema]).fetchall())


def _table_schema(
    cur: duckdb.DuckDBPyConnection, table: str, db: str, search_path: str | None
) -> str | None:
    for schema in search_schemas(search_path):
        if _found(cur, "table", db, schema, table):
            return schema
    return None
