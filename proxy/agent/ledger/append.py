"""Appending to the ledger: one transaction that numbers, hashes and stores steps.

Runs on a worker thread inside `PooledDB.transaction`, with the sessions' locks and the
organisation's lock held by `Ledger.append`, so the heads read here (the sessions' and
the organisation chain's, `orgchain.py`) are the heads the new steps link to.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import duckdb

from proxy.agent.ledger import orgchain
from proxy.agent.ledger.hashing import GENESIS_HASH, canonical_json, chain_hash
from proxy.agent.ledger.inputs import Trace
from proxy.agent.ledger.schema import CLOCK, SESSIONS, STEP_COLUMNS, TRACES
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.db.agent_lake import lake_table
from proxy.db.agent_lake_views import is_shared, target


def append_tx(
    cur: duckdb.DuckDBPyConnection, who: Identity, traces: list[Trace]
) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
    """(one row per trace, the organisation chain's new head or None if nothing new)."""
    org = who.org_id
    if is_shared(TRACES):
        # Every append of every proxy updates this one row first: two appends in flight
        # conflict at commit (40001; Ledger._retry runs the later one again on the new
        # heads), even two first appends of one session or organisation, whose INSERTs
        # alone would not conflict in a DuckLake (no keys).
        cur.execute(f"UPDATE {lake_table(CLOCK)} SET n = n + 1")
    ids = [t.trace_id for t in traces]
    stored = {
        str(r[0]): r
        for r in cur.execute(
            f"SELECT trace_id, agent_id, session_id, step_type, content_hash, timestamp, "
            f"parent_trace_id, step_index, chain_hash FROM {TRACES} "
            "WHERE org_id = ? AND trace_id IN (SELECT unnest(?::UUID[]))",
            [org, ids],
        ).fetchall()
    }
    heads: dict[tuple[str, str], dict[str, Any]] = {}
    for agent, session in {(t.agent_id, t.session_id) for t in traces}:
        row = cur.execute(
            f"SELECT total_steps, head_hash, started_at, ended_at, created_at FROM {SESSIONS} "
            "WHERE org_id = ? AND agent_id = ? AND session_id = ?",
            [org, agent, session],
        ).fetchone()
        heads[(agent, session)] = (
            {
                "total_steps": row[0],
                "head_hash": row[1],
                "started_at": row[2],
                "ended_at": row[3],
                "created_at": row[4],
                "dirty": False,
                "stored": True,
            }
            if row
            else None
        )
    now = dt.datetime.now(dt.UTC)
    out: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    batch: dict[str, Trace] = {}
    for t in traces:
        old = stored.get(t.trace_id)
        if old is not None:
            same = (
                old[1] == t.agent_id
                and old[2] == t.session_id
                and old[3] == t.step_type
                and old[4] == t.content_hash
                and _utc(old[5]) == t.timestamp
                and (None if old[6] is None else str(old[6])) == t.parent_trace_id
            )
            if not same:
                raise AgentError.conflict(
                    f"trace {t.trace_id} is already stored with different fields",
                )
            out.append(_result(t, old[7], old[8], "duplicate"))
            continue
        if t.trace_id in batch:
            first = batch[t.trace_id]
            if first.same_as(t):
                prev_row = next(r for r in out if r["trace_id"] == t.trace_id)
                out.append({**prev_row, "status": "duplicate"})
                continue
            raise AgentError.invalid(f"trace_id {t.trace_id} appears twice with different fields")
        batch[t.trace_id] = t
        head = heads.get((t.agent_id, t.session_id))
        if head is None:
            head = {
                "total_steps": 0,
                "head_hash": GENESIS_HASH,
                "started_at": t.timestamp,
                "ended_at": t.timestamp,
                "created_at": now,
            }
            heads[(t.agent_id, t.session_id)] = head
        index, prev = head["total_steps"], head["head_hash"]
        link = chain_hash(
            prev_hash=prev,
            content_hash=t.content_hash,
            org_id=org,
            agent_id=t.agent_id,
            session_id=t.session_id,
            step_index=index,
            step_type=t.step_type,
            timestamp=t.timestamp,
            trace_id=t.trace_id,
            parent_trace_id=t.parent_trace_id,
            metadata=t.metadata,
            importance=t.importance,
        )
        head.update(
            total_steps=index + 1,
            head_hash=link,
            started_at=min(_utc(head["started_at"]), t.timestamp),
            ended_at=max(_utc(head["ended_at"]), t.timestamp),
            dirty=True,
        )
        new.append(
            {
                "trace_id": t.trace_id,
                "org_id": org,
                "agent_id": t.agent_id,
                "session_id": t.session_id,
                "step_index": index,
                "step_type": t.step_type,
                "content": canonical_json(t.content),
                "metadata": None if t.metadata is None else canonical_json(t.metadata),
                "importance": t.importance,
                "timestamp": t.timestamp,
                "parent_trace_id": t.parent_trace_id,
                "content_hash": t.content_hash,
                "prev_hash": prev,
                "chain_hash": link,
                "created_at": now,
            }
        )
        out.append(_result(t, index, link, "ingested"))
    org_head = None
    if new:
        _insert_steps(cur, new)
        org_head = orgchain.extend(cur, org, new, now)
    for (agent, session), head in heads.items():
        if head is None or not head.get("dirty"):
            continue
        # UPDATE or INSERT, not an upsert (ON CONFLICT costs several times more in DuckDB).
        if head.get("stored"):
            cur.execute(
                f"UPDATE {target(SESSIONS)} SET total_steps = ?, head_hash = ?, started_at = ?, "
                "ended_at = ?, updated_at = ? WHERE org_id = ? AND agent_id = ? AND session_id = ?",
                [
                    head["total_steps"], head["head_hash"], head["started_at"],
                    head["ended_at"], now, org, agent, session,
                ],
            )  # fmt: skip
        else:
            cur.execute(
                f"INSERT INTO {target(SESSIONS)} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    org, agent, session, head["total_steps"], head["head_hash"],
                    head["started_at"], head["ended_at"], head["created_at"], now,
                ],
            )  # fmt: skip
    return out, org_head


def _insert_steps(cur: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    """Insert the steps: a VALUES list for a few (one append), Arrow for many (a
    registered Arrow table costs milliseconds per statement, executemany ~0.3 ms a row)."""
    if len(rows) <= orgchain.SMALL_BATCH:
        one = "(?::UUID, ?, ?, ?, ?, ?, ?::JSON, ?::JSON, ?, ?, ?::UUID, ?, ?, ?, ?)"
        names = [c.strip() for c in STEP_COLUMNS.split(",")]
        cur.execute(
            f"INSERT INTO {target(TRACES)} ({STEP_COLUMNS}) VALUES {', '.join([one] * len(rows))}",
            [r[c] for r in rows for c in names],
        )
        return
    import pyarrow as pa

    string_cols = [
        "trace_id", "org_id", "agent_id", "session_id", "step_type", "content", "metadata",
        "parent_trace_id", "content_hash", "prev_hash", "chain_hash",
    ]  # fmt: skip
    columns: dict[str, pa.Array] = {
        c: pa.array([r[c] for r in rows], pa.string()) for c in string_cols
    }
    columns["step_index"] = pa.array([r["step_index"] for r in rows], pa.int64())
    columns["importance"] = pa.array([r["importance"] for r in rows], pa.float64())
    for c in ("timestamp", "created_at"):
        columns[c] = pa.array([r[c] for r in rows], pa.timestamp("us", tz="UTC"))
    name = f"__hati_cot_{uuid.uuid4().hex}"
    cur.register(name, pa.table(columns))
    try:
        cur.execute(
            f"""INSERT INTO {target(TRACES)} ({STEP_COLUMNS})
                SELECT trace_id::UUID, org_id, agent_id, session_id, step_index, step_type,
                       content::JSON, metadata::JSON, importance, timestamp,
                       parent_trace_id::UUID, content_hash, prev_hash, chain_hash, created_at
                FROM {name}"""
        )
    finally:
        cur.unregister(name)


def _result(t: Trace, index: int, link: str, status: str) -> dict[str, Any]:
    return {
        "trace_id": t.trace_id,
        "session_id": t.session_id,
        "agent_id": t.agent_id,
        "step_index": index,
        "content_hash": t.content_hash,
        "chain_hash": link,
        "status": status,
    }


def _utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.UTC) if value.tzinfo else value.replace(tzinfo=dt.UTC)
