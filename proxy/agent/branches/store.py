"""The branches' metadata table `hatidata_internal.branches`: its DDL and row helpers."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import duckdb

from proxy.core.names import INTERNAL_SCHEMA

TABLE = f"{INTERNAL_SCHEMA}.branches"
AUDIT = f"{INTERNAL_SCHEMA}.branch_audit"
_ADDED = (
    ("query_count", "BIGINT DEFAULT 0"),
    ("query_ms", "DOUBLE DEFAULT 0"),
    ("last_activity_at", "TIMESTAMPTZ"),
    ("approval_decision", "VARCHAR"),
    ("approval_by", "VARCHAR"),
    ("approval_at", "TIMESTAMPTZ"),
    ("approval_reason", "VARCHAR"),
    ("approval_session_id", "VARCHAR"),
)

COLUMNS = (
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
    ("query_count", "BIGINT"),
    ("last_activity_at", "TIMESTAMPTZ"),
    ("approval_decision", "VARCHAR"),
    ("approval_by", "VARCHAR"),
    ("approval_at", "TIMESTAMPTZ"),
)
SELECT_COLUMNS = ", ".join(name for name, _ in COLUMNS)


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
    # Added after the first release (ALTER, so older databases gain them): usage figures for
    # cost and lifecycle triggers, and the latest merge approval (proxy.agent.branches.approval).
    for column, sql_type in _ADDED:
        cur.execute(f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS {column} {sql_type}")
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {AUDIT} (
            id UUID NOT NULL,
            branch_id VARCHAR NOT NULL,
            org_id VARCHAR NOT NULL,
            agent_id VARCHAR NOT NULL,
            event VARCHAR NOT NULL,
            actor VARCHAR,
            details JSON,
            created_at TIMESTAMPTZ NOT NULL
        )"""
    )


def audit(
    cur: duckdb.DuckDBPyConnection,
    branch_id: str,
    event: str,
    actor: str | None,
    details: dict[str, Any] | None = None,
) -> None:
    """Append one entry to a branch's audit trail (entries are never updated or deleted)."""
    cur.execute(
        f"INSERT INTO {AUDIT} SELECT ?, branch_id, org_id, agent_id, ?, ?, ?, ? "
        f"FROM {TABLE} WHERE branch_id = ?",
        [str(uuid.uuid4()), event, actor, json.dumps(details or {}, default=str),
         dt.datetime.now(dt.UTC), branch_id],
    )  # fmt: skip


def branch_row(row: tuple) -> dict[str, Any]:
    out = dict(zip([n for n, _ in COLUMNS], row, strict=True))
    out["tables_copied"] = copied_list(out["tables_copied"])
    return out


def record_copies(
    cur: duckdb.DuckDBPyConnection, schema: str, current: list[dict], new: list[dict]
) -> None:
    if not new:
        return
    cur.execute(
        f"UPDATE {TABLE} SET tables_copied = ? WHERE schema_name = ?",
        [json.dumps(current + new), schema],
    )


def copied_list(raw: Any) -> list[dict]:
    if raw is None:
        return []
    value = json.loads(raw) if isinstance(raw, str) else raw
    return list(value or [])
