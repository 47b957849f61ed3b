"""Runs corpus entries on an in-process DuckDB with the catalog installed."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import duckdb
from corpus import Entry
from expectations import CHECKS

from proxy.db.catalog import install, prepare_cursor
from transpiler import transpile

FIXTURE = Path(__file__).parent / "fixture.sql"
# A `pg_catalog.` / `information_schema.` qualifier left in the DuckDB SQL (outside
# quotes) reaches DuckDB's own catalogs (schema main, not public), never this layer.
_QUOTED = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*\"""")
_BYPASS = re.compile(r"(?<![\w.])(pg_catalog|information_schema)\s*\.\s*[\w\"]", re.IGNORECASE)


def _blank_strings(m: re.Match[str]) -> str:
    # keep quoted identifiers (they can be qualified names), drop string literals
    return m[0] if m[0].startswith('"') else "''"


# The connections catalog cursors come from: the catalog's Python functions (pg_database,
# pg_stat_activity) are released with the connection they were registered on.
_CONNECTIONS: list[duckdb.DuckDBPyConnection] = []


def catalog_cursor() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect(":memory:")
    _CONNECTIONS.append(conn)
    conn.execute(FIXTURE.read_text())
    install(conn)
    cur = conn.cursor()
    prepare_cursor(cur)
    return cur


def oid_lookup(cur: duckdb.DuckDBPyConnection) -> Callable[[str], int]:
    def oid_of(name: str) -> int:
        row = cur.execute("SELECT oid FROM pg_class WHERE relname = ?", [name]).fetchone()
        assert row, f"fixture has no relation {name}"
        return row[0]

    return oid_of


def transpiled(sql: str) -> list[str]:
    return [st.sql for st in transpile(sql)]


def run(
    cur: duckdb.DuckDBPyConnection, entry: Entry, to_duckdb: Callable[[str], list[str]]
) -> tuple[list[str], list[tuple]]:
    """Run the entry's statements; check what it must return. Raises on any failure."""
    sql, params = entry.resolved(oid_lookup(cur))
    cols: list[str] = []
    rows: list[tuple] = []
    for stmt in to_duckdb(sql):
        bypass = _BYPASS.search(_QUOTED.sub(_blank_strings, stmt))
        if bypass:
            raise AssertionError(f"query bypasses the catalog layer at {bypass[0]!r}")
        result = cur.execute(stmt, params or None)
        cols = [d[0] for d in result.description or []]
        rows = result.fetchall()
    check = CHECKS.get(entry.name)
    if check is not None:
        check(cols, rows)
    return cols, rows
