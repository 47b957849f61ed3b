"""Shared helpers for the ledger tests: traces as clients send them, step and verify calls."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from agent_support import who

from proxy.agent.ledger.hashing import content_hash
from proxy.core.identity import Identity


def trace(session: str = "sess-1", agent: str = "agent-a", i: int = 0, **extra: Any) -> dict:
    content = extra.pop("content", {"text": f"thought {i}", "n": i})
    out = {
        "trace_id": str(uuid.uuid4()),
        "session_id": session,
        "agent_id": agent,
        "timestamp": (dt.datetime(2026, 3, 20, 14, tzinfo=dt.UTC) + dt.timedelta(seconds=i))
        .isoformat()
        .replace("+00:00", "Z"),
        "trace_type": "thought",
        "content": content,
        "content_hash": content_hash(content),
    }
    out.update(extra)
    return out


async def steps(layer, session: str = "sess-1", n: int = 5, agent: str = "agent-a") -> list:
    out = []
    for i in range(n):
        rows = await layer.call(
            "log_reasoning_step", who(agent), session_id=session, content=f"step {i}"
        )
        out.append(rows[0])
    return out


async def verify(layer, session: str = "sess-1", agent: str = "agent-a") -> dict:
    return (await layer.call("verify_chain", who(agent), session_id=session))[0]


async def history(layer, agent: str = "agent-a") -> list[dict]:
    return await layer.call("get_session_history", who(agent))


def admin(agent: str = "auditor") -> Identity:
    return Identity(
        "local", agent, "admin@example.com", frozenset({"cot:read", "cot:write", "cot:admin"})
    )
