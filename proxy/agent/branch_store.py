"""The branches' metadata table `hatidata_internal.branches`: its DDL and row helpers."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from proxy.agent.base import INTERNAL_SCHEMA

TABLE = f"{INTERNAL_SCHEMA}.branches"

_COLUMNS = (
    ("branch_id", "VARCHAR"),
    ("name", "VARCHAR"),
    ("description", "VARCHAR"),
    ("schema_name", "VARCHAR"),
    ("status", "VARCHAR"),
    ("created_at", "TIMESTAMPTZ"),
    ("expires_at", "TIMESTAMPTZ"),
    ("merged_at", "TIMESTAMPTZ"),
    ("strategy", "VARCHAR"),
    ("tables_copied", "JSON"),
)
_SELECT = ", ".join(name for name, _ in _COLUMNS)


def install(cur: duckdb.DuckDBPyConnection) -> None:
    """Create the table (idempotent)."""
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {TABLE} (
            branch_id VARCHAR PRIMARY KEY,
            org_id VARCHAR NOT NULL,
            agent_id VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            description VARCHAR,
            schema_name VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            expires_at TIMESTAMPTZ NOT NULL,
            merged_at TIMESTAMPTZ,
            ended_at TIMESTAMPTZ,
            strategy VARCHAR,
            base_tables JSON,
            tables_copied JSON,
            merge_report JSON
        )"""
    )


def _row(row: tuple) -> dict[str, Any]:
    out = dict(zip([n for n, _ in _COLUMNS], row, strict=True))
    out["tables_copied"] = _copied_list(out["tables_copied"])
    return out


def _record_copies(
    cur: duckdb.DuckDBPyConnection, schema: str, current: list[dict], new: list[dict]
) -> None:
    if not new:
        return
    cur.execute(
        f"UPDATE {TABLE} SET tables_copied = ? WHERE schema_name = ?",
        [json.dumps(current + new), schema],
    )


def _copied_list(raw: Any) -> list[dict]:
    if raw is None:
        return []
    value = json.loads(raw) if isinstance(raw, str) else raw
    return list(value or [])
