"""Trigger tables: their DDL and identity views, and the trigger rows as callers see them."""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from typing import Any

import duckdb

from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.relations import agent_relation
from proxy.db.agent_lake_views import share, unshare

S = INTERNAL_SCHEMA
TRIGGERS = f"{S}.triggers"
FIRES = f"{S}.trigger_fires"
EVENTS = f"{S}.trigger_events"
FLAGS = f"{S}.trigger_review_flags"
INBOX = f"{S}.agent_inbox"
DELIVERIES = f"{S}.webhook_deliveries"
# With a DuckLake catalog all of them live in the agent lake (triggers/shared.py).
TABLES = [TRIGGERS, FIRES, EVENTS, FLAGS, INBOX, DELIVERIES]

TRIGGER_FIELDS = (
    "id, org_id, agent_id, name, concept, threshold, actions, action_config, cooldown_secs, "
    "enabled, scope, fire_count, last_fired_at, created_at, updated_at, embedding_model, "
    "embedding_dimensions, event_source, event_type"
)
# The caller's rows of each trigger table, in SQL (proxy/core/relations.py).
for _name, _select, _doc in (
    ("_hatidata_triggers", f"SELECT {TRIGGER_FIELDS} FROM {TRIGGERS}", "The caller's triggers"),
    ("_hatidata_trigger_fires", f"SELECT * FROM {FIRES}", "Fires of the caller's triggers"),
    ("_hatidata_trigger_events", f"SELECT * FROM {EVENTS}", "The caller's trigger events"),
    ("_hatidata_trigger_review_flags", f"SELECT * FROM {FLAGS}", "Fires flagged for review"),
    ("_hatidata_agent_inbox", f"SELECT * FROM {INBOX}", "The caller's inbox"),
    ("_hatidata_webhook_deliveries", f"SELECT * FROM {DELIVERIES}", "Webhook delivery attempts"),
):
    agent_relation(_name, f"{_select} WHERE org_id = $org_id AND agent_id = $agent_id", _doc)
_SECRET_HEADER = re.compile(r"auth|token|key|secret|cookie|signature", re.IGNORECASE)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def parsed_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def install(cur: duckdb.DuckDBPyConnection, dims: int, shared: bool = False) -> None:
    """Create the trigger tables and identity views (idempotent); `shared`: in the agent
    lake, read through local views (proxy/db/agent_lake_views.py)."""
    unshare(cur, TABLES)
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {TRIGGERS} (
            id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
            name VARCHAR NOT NULL, concept VARCHAR NOT NULL,
            concept_embedding FLOAT[{dims}], embedding_model VARCHAR,
            embedding_dimensions INTEGER, threshold DOUBLE NOT NULL, actions JSON NOT NULL,
            action_config JSON NOT NULL, cooldown_secs BIGINT NOT NULL,
            enabled BOOLEAN NOT NULL, scope VARCHAR NOT NULL, event_source VARCHAR NOT NULL,
            fire_count BIGINT NOT NULL, last_fired_at TIMESTAMPTZ,
            created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL)"""
    )
    # Branch lifecycle triggers (proxy.agent.branches.events) name their event here; added
    # after the first release, hence ALTER for databases created before.
    cur.execute(f"ALTER TABLE {TRIGGERS} ADD COLUMN IF NOT EXISTS event_type VARCHAR")
    # A model with other dimensions since last run: the old vectors are meaningless;
    # the concepts are re-embedded in start().
    row = cur.execute(
        "SELECT data_type FROM system.main.duckdb_columns() WHERE database_name = system.main.current_database() "
        "AND schema_name = ? AND table_name = 'triggers' AND column_name = 'concept_embedding'",
        [S],
    ).fetchone()
    if row is not None and row[0] != f"FLOAT[{dims}]":
        cur.execute(f"ALTER TABLE {TRIGGERS} DROP COLUMN concept_embedding")
        cur.execute(f"ALTER TABLE {TRIGGERS} ADD COLUMN concept_embedding FLOAT[{dims}]")
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {FIRES} (
            id UUID NOT NULL, trigger_id UUID NOT NULL, trigger_name VARCHAR,
            org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL, source VARCHAR,
            source_id VARCHAR, source_agent_id VARCHAR, similarity DOUBLE,
            threshold DOUBLE, input_text VARCHAR, action_taken VARCHAR,
            status VARCHAR NOT NULL, details JSON, fired_at TIMESTAMPTZ NOT NULL)"""
    )
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {EVENTS} (
            id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
            trigger_id UUID, fire_id UUID, event_type VARCHAR NOT NULL, payload JSON,
            created_at TIMESTAMPTZ NOT NULL)"""
    )
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {FLAGS} (
            id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
            trigger_id UUID, trigger_name VARCHAR, fire_id UUID, source VARCHAR,
            source_id VARCHAR, source_agent_id VARCHAR, similarity DOUBLE,
            input_text VARCHAR, status VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL)"""
    )
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {INBOX} (
            id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL, trigger_id UUID, trigger_name VARCHAR, fire_id UUID,
            from_agent_id VARCHAR, source VARCHAR, source_id VARCHAR, similarity DOUBLE,
            message VARCHAR, payload JSON, created_at TIMESTAMPTZ NOT NULL,
            read_at TIMESTAMPTZ)"""
    )
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {DELIVERIES} (
            id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
            trigger_id UUID, fire_id UUID, url VARCHAR, attempt INTEGER, ok BOOLEAN,
            status_code INTEGER, error VARCHAR, duration_ms DOUBLE,
            attempted_at TIMESTAMPTZ NOT NULL)"""
    )
    if shared:
        share(cur, TABLES)


def _redacted(config: dict[str, Any]) -> dict[str, Any]:
    """action_config as shown to callers: signing secret and credential headers hidden."""
    out = dict(config)
    if out.get("secret"):
        out["secret"] = "***"
    headers = out.get("headers")
    if isinstance(headers, dict):
        out["headers"] = {k: "***" if _SECRET_HEADER.search(k) else v for k, v in headers.items()}
    return out


def own(who: Identity) -> tuple[str, list[Any]]:
    """The scope of resolve() for the caller's own triggers."""
    return "org_id = ? AND agent_id = ?", [who.org_id, who.agent_id]


def select_triggers(
    cur: duckdb.DuckDBPyConnection, who: Identity, where: str = "TRUE", params: list | None = None
) -> list[dict[str, Any]]:
    cur.execute(
        f"SELECT {TRIGGER_FIELDS} FROM {TRIGGERS} WHERE org_id = ? AND agent_id = ? AND ({where}) "
        "ORDER BY created_at, name",
        [who.org_id, who.agent_id, *(params or [])],
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def trigger_row(r: dict[str, Any]) -> dict[str, Any]:
    actions = parsed_json(r["actions"])
    return {
        "trigger_id": str(r["id"]),
        "id": str(r["id"]),
        "org_id": r["org_id"],
        "agent_id": r["agent_id"],
        "name": r["name"],
        "concept": r["concept"],
        "threshold": r["threshold"],
        "actions": actions,
        "action_type": actions[0] if actions else None,
        "action_config": _redacted(parsed_json(r["action_config"]) or {}),
        "cooldown_secs": r["cooldown_secs"],
        "enabled": r["enabled"],
        "status": "active" if r["enabled"] else "inactive",
        "scope": r["scope"],
        "fire_count": r["fire_count"],
        "last_fired_at": r["last_fired_at"],
        "created_at": r["created_at"],
        "updated_at": r["updated_at"],
        "embedding_model": r["embedding_model"],
        "embedding_dimensions": r["embedding_dimensions"],
        "event_source": r["event_source"],
        "event_type": r["event_type"],
    }


def uuids_as_text(row: dict[str, Any]) -> dict[str, Any]:
    # The same values whichever way a row leaves (SQL, MCP JSON, REST).
    return {k: str(v) if isinstance(v, uuid.UUID) else v for k, v in row.items()}


def resolve(cur: duckdb.DuckDBPyConnection, trigger: Any, scope: str, params: list[Any]) -> str:
    """The id (UUID text) of the trigger `trigger` names, among the triggers `scope` (SQL
    over the triggers table, with `params`) selects: its id or its name.

    A name is unique per agent (name_taken), not across an organisation: a name several of
    the org's agents use is an invalid argument listing the triggers' ids. None found: not
    found."""
    if isinstance(trigger, uuid.UUID):
        trigger = str(trigger)
    if not isinstance(trigger, str) or not trigger.strip():
        raise AgentError.invalid("trigger_id must be a trigger id or name")
    text = trigger.strip()
    try:
        tid: str | None = str(uuid.UUID(text))
    except ValueError:
        tid = None
    if tid is not None:
        found = cur.execute(
            f"SELECT 1 FROM {TRIGGERS} WHERE id = ? AND {scope}", [tid, *params]
        ).fetchone()
        if found is not None:
            return tid
    rows = cur.execute(
        f"SELECT id, agent_id FROM {TRIGGERS} WHERE name = ? AND {scope} ORDER BY created_at, id",
        [text, *params],
    ).fetchall()
    if len(rows) == 1:
        return str(rows[0][0])
    if not rows:
        raise AgentError.not_found(f"trigger {trigger!r} not found")
    ids = ", ".join(f"{r[0]} (agent {r[1]})" for r in rows)
    raise AgentError.invalid(
        f"trigger name {text!r} is ambiguous: {len(rows)} triggers have it ({ids})",
        hint="pass the trigger_id of the one you mean",
    )


def name_taken(cur: duckdb.DuckDBPyConnection, who: Identity, name: str, but: str | None) -> bool:
    row = cur.execute(
        f"SELECT 1 FROM {TRIGGERS} WHERE org_id = ? AND agent_id = ? AND name = ? "
        "AND id IS DISTINCT FROM ?",
        [who.org_id, who.agent_id, name, but],
    ).fetchone()
    return row is not None
