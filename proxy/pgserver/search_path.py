"""DuckDB's search_path setting as the (database, schema) pairs it names, in order: where
an unqualified table name is looked up (alter_rebuild.py, column_origins.py); setting it
so that schemas missing from the database are skipped, as PostgreSQL does."""

from __future__ import annotations

import re

import duckdb

from proxy.core.sqltext import quote_literal
from proxy.db.settings import DEFAULTS, duckdb_search_path

_SEARCH_PATH_ENTRY = re.compile(r'"((?:[^"]|"")*)"|([^.",]+)')


def search_path_order(path: str, current: str) -> list[tuple[str, str]]:
    """DuckDB's search_path setting ('"db".main,pg' / 'main,sales') as (database, schema)."""
    out = []
    for entry in (path or "").split(","):
        parts = [
            (q.replace('""', '"') if q else bare.strip())
            for q, bare in _SEARCH_PATH_ENTRY.findall(entry.strip())
        ]
        parts = [p for p in parts if p]
        if len(parts) == 1:
            out.append((current, parts[0]))
        elif len(parts) == 2:
            out.append((parts[0], parts[1]))
    return out or [(current, "main")]


def run_setting(cur: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Run a setting's DuckDB statement. `SET search_path = '...'` keeps only the schemas
    that exist: PostgreSQL accepts a path naming a missing schema (dlt connects with
    `options=-c search_path=<dataset>` before it creates that schema) and skips it in
    lookups, where DuckDB refuses the whole SET."""
    found = _SET_PATH.match(sql)
    if found is None:
        cur.execute(sql)
        return
    path = found[1].replace("''", "'")
    try:
        cur.execute(sql)
    except duckdb.CatalogException:
        cur.execute(f"SET search_path = {quote_literal(existing_entries(cur, path))}")


def existing_entries(cur: duckdb.DuckDBPyConnection, path: str) -> str:
    """The entries of DuckDB search_path `path` whose schema exists, in order."""
    current = cur.execute("SELECT system.main.current_database()").fetchone()[0]
    schemas = set(
        cur.execute(
            "SELECT database_name, schema_name FROM system.main.duckdb_schemas()"
        ).fetchall()
    )
    kept = [
        entry
        for entry in path.split(",")
        if all(pair in schemas for pair in search_path_order(entry, current))
    ]
    return ",".join(kept)


def reapply(cur: duckdb.DuckDBPyConnection, pg_path: str | None) -> None:
    """After CREATE / DROP SCHEMA: the session's path again, as PostgreSQL resolves it at
    each lookup (a schema created since is now on it; DuckDB forgets the whole path when a
    schema on it is dropped)."""
    path = duckdb_search_path(pg_path if pg_path is not None else DEFAULTS["search_path"])
    run_setting(cur, f"SET search_path = {quote_literal(path)}")


_SET_PATH = re.compile(r"^SET search_path = '((?:[^']|'')*)'$")
