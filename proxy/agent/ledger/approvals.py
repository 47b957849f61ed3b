"""Approvals of reasoning sessions: immutable approve / reject records (seed 001).

Table `hatidata_internal.cot_approvals`; nothing updates or deletes a row. The reviewer
is the caller's user name (else its agent id). A `trace_id`, when given, must be a
step of the session being reviewed.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.ledger.schema import APPROVALS, TRACES, is_admin
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.db.agent_lake_views import target

if TYPE_CHECKING:
    from proxy.agent.ledger.service import Ledger

_APPROVAL_COLUMNS = (
    "id, org_id, agent_id, session_id, trace_id, decision, reason, reviewed_by, created_at"
)


async def record(
    ledger: Ledger,
    who: Identity,
    session_id: Any,
    decision: Any,
    trace_id: str | None,
    reason: Any,
    agent_id: Any,
) -> dict[str, Any]:
    if decision not in ("approve", "reject"):
        raise AgentError.invalid(f"decision must be 'approve' or 'reject', got {decision!r:.40}")
    if reason is not None and (not isinstance(reason, str) or len(reason) > 10_000):
        raise AgentError.invalid("reason must be text of at most 10000 characters")
    agent = await ledger.resolve(who, session_id, agent_id)
    record = {
        "id": str(uuid.uuid4()),
        "org_id": who.org_id,
        "agent_id": agent,
        "session_id": session_id,
        "trace_id": trace_id,
        "decision": decision,
        "reason": reason,
        "reviewed_by": who.user or who.agent_id,
        "created_at": dt.datetime.now(dt.UTC),
    }

    def insert(cur: duckdb.DuckDBPyConnection) -> None:
        if trace_id is not None:
            found = cur.execute(
                f"SELECT 1 FROM {TRACES} WHERE org_id = ? AND agent_id = ? "
                "AND session_id = ? AND trace_id = ?",
                [who.org_id, agent, session_id, trace_id],
            ).fetchone()
            if found is None:
                raise AgentError.not_found(
                    f"trace {trace_id} is not a step of session {session_id!r}"
                )
        cur.execute(
            f"INSERT INTO {target(APPROVALS)} ({_APPROVAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [record[c.strip()] for c in _APPROVAL_COLUMNS.split(",")],
        )

    await ledger.layer.db.transaction(insert)
    del record["org_id"]
    return record


async def listing(
    ledger: Ledger, who: Identity, session_id: Any, agent_id: Any, limit: int
) -> list[dict[str, Any]]:
    if session_id is not None:
        agent = await ledger.resolve(who, session_id, agent_id)
    elif agent_id is not None and agent_id != who.agent_id and not is_admin(who):
        return []
    else:
        agent = agent_id if agent_id is not None else who.agent_id

    def read(cur: duckdb.DuckDBPyConnection):
        sql = f"SELECT {_APPROVAL_COLUMNS} FROM {APPROVALS} WHERE org_id = ? AND agent_id = ?"
        args: list[Any] = [who.org_id, agent]
        if session_id is not None:
            sql += " AND session_id = ?"
            args.append(session_id)
        sql += " ORDER BY created_at, id LIMIT ?"
        args.append(limit)
        res = cur.execute(sql, args)
        names = [d[0] for d in res.description]
        return [dict(zip(names, r, strict=True)) for r in res.fetchall()]

    rows = await ledger.layer.db.run(read)
    for r in rows:
        r.pop("org_id")
        r["id"] = str(r["id"])
        r["trace_id"] = None if r["trace_id"] is None else str(r["trace_id"])
    return rows
