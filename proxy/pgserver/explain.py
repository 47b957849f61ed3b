"""EXPLAIN results in Postgres's shape: one text column "QUERY PLAN", a row per plan line.

DuckDB answers EXPLAIN with (explain_key, explain_value) rows whose value is the
whole rendered plan; clients (psql, pgAdmin, ORMs' explain helpers) expect the
Postgres shape. The plan itself stays DuckDB's (operators such as HNSW_INDEX_SCAN).
"""

from __future__ import annotations

import re

import duckdb

from proxy.pgserver.results import Column

_TEXT = (Column("QUERY PLAN", "VARCHAR"),)
_JSON = (Column("QUERY PLAN", "JSON"),)  # Postgres types a FORMAT JSON plan json

# EXPLAIN (FORMAT JSON ...): Postgres sends such a plan as one row, not a row per line.
_OPTIONS = re.compile(r"^\s*EXPLAIN(?:\s+ANALY[SZ]E)?(?:\s+VERBOSE)?\s*\(([^)]*)\)", re.IGNORECASE)
_FORMAT = re.compile(r"\bFORMAT\s+(\w+)", re.IGNORECASE)


def _format(sql: str) -> str:
    options = _OPTIONS.match(sql)
    found = _FORMAT.search(options.group(1)) if options else None
    return found.group(1).upper() if found else "TEXT"


def columns(sql: str) -> tuple[Column, ...]:
    """The result columns of EXPLAIN `sql` (known before it runs, for Describe)."""
    return _JSON if _format(sql) == "JSON" else _TEXT


def plan_rows(cur: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[str]]:
    """The result of EXPLAIN `sql`, just run on `cur`, as QUERY PLAN rows."""
    values = [str(row[-1]) for row in cur.fetchall() if row and row[-1] is not None]
    if _format(sql) != "TEXT":
        return [(value.rstrip("\n"),) for value in values]
    lines: list[str] = []
    for value in values:
        lines.extend(value.rstrip("\n").split("\n"))
    return [(line,) for line in lines]
