"""Session compaction and repair (seed 004).

Compaction: a session with at least `threshold` events keeps its last `keep_recent`
verbatim; the older ones are summarised (proxy/agent/sessions/summarize.py), the summary
is stored as a memory (type episode, importance 0.9, the session's id) and replaces them
in the session as one `system` event at the first replaced position, whose metadata says
how many events it stands for, the method and the memory's id.

Repair, in seven phases, idempotent (a second run finds nothing to fix):
1. events without an id are removed; 2. events with an id seen earlier are removed;
3. consecutive events of the same role (not system) are merged into the first; 4. events
whose metadata names a memory that no longer exists are counted (orphans); 5. timestamps
that go back in time are raised to the previous event's; 6. events over 500 KB are
flagged (`metadata.oversized`); 7. the session is written back, with the statistics.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.sessions import search
from proxy.agent.sessions.summarize import summarize
from proxy.agent.sessions.tables import EVENTS, SESSIONS
from proxy.agent.sessions.window import event_text
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.db.agent_lake_views import target

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

OVERSIZED_BYTES = 500 * 1024
SUMMARY_IMPORTANCE = 0.9


async def compact(
    layer: AgentContext, who: Identity, session_id: str, threshold: int, keep_recent: int
) -> dict[str, Any]:
    if not isinstance(threshold, int) or threshold < 1:
        raise AgentError.invalid("threshold must be a positive integer")
    if not isinstance(keep_recent, int) or keep_recent < 0:
        raise AgentError.invalid("keep_recent must be a non-negative integer")
    sessions = layer.sessions
    events = await sessions.events(who, session_id, None, None)
    out = {"session_id": session_id, "compacted": False, "summarized": 0}
    out |= {"kept": len(events), "memory_id": None, "method": None}
    old = events[: max(len(events) - keep_recent, 0)]
    if len(events) < threshold or not old:
        return out
    text = "\n".join(f"{e['author']}: {t}" for e in old if (t := event_text(e)))
    summary, method = await summarize(layer, text or "(no text)")
    memory = await layer.call(
        "store_memory",
        who,
        content=summary,
        memory_type="episode",
        importance=SUMMARY_IMPORTANCE,
        session_id=session_id,
        metadata={"source": "session_compaction", "events": len(old), "method": method},
    )
    memory_id = str(memory[0]["memory_id"])
    seqs = [e["seq"] for e in old]
    event = {
        "seq": seqs[0],
        "event_id": str(uuid.uuid4()),
        "author": "system",
        "timestamp": old[-1]["timestamp"],
        "message": {"role": "system", "parts": [{"type": "text", "text": summary}]},
        "actions": {},
        "metadata": {"compacted_events": len(old), "method": method, "memory_id": memory_id},
    }

    def replace(cur: duckdb.DuckDBPyConnection) -> None:
        key = [who.org_id, who.agent_id, session_id]
        which = "WHERE org_id = ? AND agent_id = ? AND session_id = ? AND seq IN"
        which += " (SELECT unnest(?::BIGINT[]))"
        (found,) = cur.execute(f"SELECT count(*) FROM {EVENTS} {which}", [*key, seqs]).fetchone()
        if found != len(seqs):
            raise AgentError.conflict("the session changed while it was compacted; try again")
        cur.execute(f"DELETE FROM {target(EVENTS)} {which}", [*key, seqs])  # no RETURNING in a lake
        _insert(cur, key, event)
        session = _session_row(cur, key)
        for seq in seqs:
            search.drop_event(cur, who, session_id, seq)
        search.index_event(cur, who, session, event)

    await sessions.transaction(who, session_id, replace)
    sessions.index.poke()
    return out | {
        "compacted": True,
        "summarized": len(old),
        "kept": len(events) - len(old),
        "memory_id": memory_id,
        "method": method,
    }


async def repair(layer: AgentContext, who: Identity, session_id: str) -> dict[str, Any]:
    sessions = layer.sessions
    events = await sessions.events(who, session_id, None, None)
    stats = dict.fromkeys(
        ("empty_ids", "duplicates", "merged", "orphans", "reordered", "oversized"), 0
    )
    seen: set[str] = set()
    kept: list[dict[str, Any]] = []
    changed: dict[int, dict[str, Any]] = {}  # seq -> event to write back
    removed: list[int] = []
    for e in events:
        if not (e["event_id"] or "").strip():  # 1
            stats["empty_ids"] += 1
            removed.append(e["seq"])
        elif e["event_id"] in seen:  # 2
            stats["duplicates"] += 1
            removed.append(e["seq"])
        else:
            seen.add(e["event_id"])
            kept.append(e)
    merged: list[dict[str, Any]] = []
    for e in kept:  # 3
        prev = merged[-1] if merged else None
        if prev is not None and _role(prev) == _role(e) and _role(e) != "system":
            prev["message"] = _joined(prev["message"], e["message"])
            changed[prev["seq"]] = prev
            removed.append(e["seq"])
            stats["merged"] += 1
        else:
            merged.append(e)
    last: dt.datetime | None = None
    for e in merged:
        meta = dict(e["metadata"] or {})
        if meta.get("memory_id") and not await _memory_exists(layer, who, meta["memory_id"]):
            stats["orphans"] += 1  # 4: counted, not changed
        if last is not None and e["timestamp"] < last:  # 5
            e["timestamp"] = last
            changed[e["seq"]] = e
            stats["reordered"] += 1
        last = e["timestamp"]
        size = len(json.dumps(e["message"], ensure_ascii=False).encode())
        if size > OVERSIZED_BYTES and not meta.get("oversized"):  # 6
            e["metadata"] = meta | {"oversized": True, "message_bytes": size}
            changed[e["seq"]] = e
            stats["oversized"] += 1
    fixes = sum(v for k, v in stats.items() if k != "orphans")

    def write(cur: duckdb.DuckDBPyConnection) -> None:  # 7
        key = [who.org_id, who.agent_id, session_id]
        session = _session_row(cur, key)
        for seq in removed + list(changed):
            cur.execute(
                f"DELETE FROM {target(EVENTS)} WHERE org_id = ? AND agent_id = ? "
                "AND session_id = ? AND seq = ?",
                [*key, seq],
            )
            search.drop_event(cur, who, session_id, seq)
        for e in changed.values():
            _insert(cur, key, e)
            search.index_event(cur, who, session, e)

    if fixes:
        await sessions.transaction(who, session_id, write)
        sessions.index.poke()
    return {"session_id": session_id, "repaired": bool(fixes), "fixes": fixes, "stats": stats}


def _role(e: dict[str, Any]) -> str:
    message = e.get("message")
    if isinstance(message, dict) and isinstance(message.get("role"), str):
        return message["role"]
    return str(e.get("author"))


def _joined(a: Any, b: Any) -> Any:
    """Two messages of one role as one: their parts (or texts) in order."""
    if isinstance(a, dict) and isinstance(b, dict) and "parts" in a and "parts" in b:
        return {**a, "parts": list(a["parts"] or []) + list(b["parts"] or [])}
    return "\n".join(x if isinstance(x, str) else json.dumps(x) for x in (a, b) if x)


async def _memory_exists(layer: AgentContext, who: Identity, memory_id: str) -> bool:
    try:
        return bool(await layer.call("get_memory", who, memory_id=memory_id))
    except (AgentError, ValueError):  # not found, or not even a memory id
        return False


def _session_row(cur: duckdb.DuckDBPyConnection, key: list[str]) -> dict[str, Any]:
    row = cur.execute(
        f"SELECT app_name, user_id FROM {SESSIONS} WHERE org_id = ? AND agent_id = ? "
        "AND session_id = ?",
        key,
    ).fetchone()
    if row is None:
        raise AgentError.not_found(f"no session {key[2]!r}")
    return {"session_id": key[2], "app_name": row[0], "user_id": row[1]}


def _insert(cur: duckdb.DuckDBPyConnection, key: list[str], e: dict[str, Any]) -> None:
    cur.execute(
        f"INSERT INTO {target(EVENTS)} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::JSON, ?::JSON, ?::JSON, ?)",
        [
            *key,
            e["seq"],
            e["event_id"],
            e.get("invocation_id"),
            e["author"],
            e.get("branch"),
            json.dumps(e.get("message")),
            json.dumps(e.get("actions")),
            json.dumps(e.get("metadata")),
            e["timestamp"],
        ],
    )
