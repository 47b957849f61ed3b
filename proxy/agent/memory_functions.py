"""The memory operations, registered as agent functions (SQL, MCP and REST share them).

Errors: an unknown memory id and another agent's (or org's) memory id are the same
`not_found`, for every operation that names one (get, delete, reembed, supersedes).
Maintenance (expire / evict / decay) runs only when called, only over the caller's own
memories, returns counts, and has a `dry_run` that changes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import TYPE_CHECKING, Any

from proxy.agent import memory_search
from proxy.agent.base import AgentError, Identity, Param, agent_function
from proxy.agent.memory import (
    LIVE,
    MAX_CONTENT_BYTES,
    MAX_METADATA_BYTES,
    MAX_TYPE_CHARS,
    MEMORY_COLUMNS,
    SELECT_COLUMNS,
    T_GRANT,
    T_MEM,
    T_VEC,
    Memory,
    _Job,
    content_hash,
    memory_row,
    now,
    parse_metadata,
    parse_uuid,
)

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.layer import AgentLayer

STORE_COLUMNS = (
    ("memory_id", "UUID"),
    ("status", "VARCHAR"),  # 'stored' (new or already present)
    ("deduplicated", "BOOLEAN"),
    ("has_embedding", "BOOLEAN"),
    ("embedding_status", "VARCHAR"),
    ("embedding_model", "VARCHAR"),
    ("content_hash", "VARCHAR"),
    ("superseded_id", "UUID"),
    ("created_at", "TIMESTAMPTZ"),
)

SEARCH_COLUMNS = (
    ("memory_id", "UUID"),
    ("agent_id", "VARCHAR"),
    ("content", "VARCHAR"),
    ("memory_type", "VARCHAR"),
    ("importance", "DOUBLE"),
    ("metadata", "JSON"),
    ("session_id", "VARCHAR"),
    ("similarity_score", "DOUBLE"),
    ("keyword_score", "DOUBLE"),
    ("score", "DOUBLE"),
    ("score_kind", "VARCHAR"),
    ("created_at", "TIMESTAMPTZ"),
    ("conflict_status", "VARCHAR"),
    ("superseded_by_id", "UUID"),
    ("has_embedding", "BOOLEAN"),
    ("embedding_status", "VARCHAR"),
    ("access_count", "BIGINT"),
    ("confidence", "DOUBLE"),
)


def _mem(layer: AgentLayer) -> Memory:
    mem: Memory = layer.memory
    mem.check_enabled()
    return mem


def _text(value: Any, name: str, *, required: bool = False, limit: int | None = None) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise AgentError.invalid(f"{name} is required and must not be empty")
        return None
    if not isinstance(value, str):
        raise AgentError.invalid(f"{name} must be text, got {type(value).__name__}")
    if limit is not None and len(value) > limit:
        raise AgentError.invalid(f"{name} is longer than {limit} characters")
    return value


def _expiry(expires_at: Any, ttl_seconds: Any) -> dt.datetime | None:
    if expires_at is not None and ttl_seconds is not None:
        raise AgentError.invalid("give expires_at or ttl_seconds, not both")
    if ttl_seconds is not None:
        if int(ttl_seconds) <= 0:
            raise AgentError.invalid(f"ttl_seconds must be positive, got {ttl_seconds}")
        return now() + dt.timedelta(seconds=int(ttl_seconds))
    if expires_at is None:
        return None
    if isinstance(expires_at, str):
        try:
            expires_at = dt.datetime.fromisoformat(expires_at)
        except ValueError:
            raise AgentError.invalid("expires_at must be an ISO 8601 timestamp") from None
    if not isinstance(expires_at, dt.datetime):
        raise AgentError.invalid("expires_at must be a timestamp")
    if expires_at.tzinfo is None:
        expires_at = expires_at.replace(tzinfo=dt.UTC)
    if expires_at <= now():
        raise AgentError.invalid("expires_at is in the past")
    return expires_at


@agent_function(
    "store_memory",
    params=[
        Param("content", "VARCHAR"),
        Param("memory_type", "VARCHAR", "fact"),
        Param("metadata", "JSON", None),
        Param("importance", "DOUBLE", 0.5),
        Param("session_id", "VARCHAR", None),
        Param("supersedes", "UUID", None),
        Param("expires_at", "TIMESTAMPTZ", None),
        Param("ttl_seconds", "BIGINT", None),
        Param("wait", "BOOLEAN", False),
    ],
    columns=STORE_COLUMNS,
    scope="memory:write",
    writes=True,
)
async def store_memory(
    layer: AgentLayer,
    who: Identity,
    *,
    content: Any,
    memory_type: Any = "fact",
    metadata: Any = None,
    importance: Any = 0.5,
    session_id: Any = None,
    supersedes: Any = None,
    expires_at: Any = None,
    ttl_seconds: Any = None,
    wait: Any = False,
) -> list[dict[str, Any]]:
    """Store a memory; it is embedded in the background (wait := true waits for it)."""
    mem = _mem(layer)
    content = _text(content, "content", required=True)
    size = len(content.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise AgentError.invalid(
            f"content is {size} bytes; a memory holds at most {MAX_CONTENT_BYTES} bytes",
            hint="split the text into several memories",
        )
    memory_type = _text(
        "fact" if memory_type is None else memory_type,
        "memory_type",
        required=True,
        limit=MAX_TYPE_CHARS,
    ).strip()
    imp = memory_search.check_importance(0.5 if importance is None else importance, "importance")
    meta = parse_metadata(metadata)
    meta_text = json.dumps(meta if meta is not None else {}, ensure_ascii=False)
    if len(meta_text.encode("utf-8")) > MAX_METADATA_BYTES:
        raise AgentError.invalid(f"metadata is larger than {MAX_METADATA_BYTES} bytes")
    session_id = _text(session_id, "session_id", limit=1000)
    old_id = parse_uuid(supersedes, "supersedes") if supersedes is not None else None
    expiry = _expiry(expires_at, ttl_seconds)
    digest = content_hash(content)
    new_id = str(uuid.uuid4())
    at = now()

    def tx(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        if old_id is not None:
            old = cur.execute(
                f"SELECT conflict_status, superseded_by_id::VARCHAR, seq FROM {T_MEM}"
                " WHERE memory_id = ? AND org_id = ? AND agent_id = ?",
                [old_id, who.org_id, who.agent_id],
            ).fetchone()
            if old is None:
                raise AgentError.not_found(f"memory {old_id} (to supersede) not found")
        dup = cur.execute(
            f"SELECT memory_id::VARCHAR, seq, has_embedding, embedding_status, embedding_model,"
            f" created_at FROM {T_MEM} WHERE org_id = ? AND agent_id = ? AND content_hash = ?"
            f" AND {LIVE} ORDER BY seq LIMIT 1",
            [who.org_id, who.agent_id, digest],
        ).fetchone()
        if dup is not None:
            info = dict(
                memory_id=dup[0],
                seq=dup[1],
                has_embedding=dup[2],
                embedding_status=dup[3],
                embedding_model=dup[4],
                created_at=dup[5],
                deduplicated=True,
            )
        else:
            seq = cur.execute(
                f"INSERT INTO {T_MEM} (memory_id, org_id, agent_id, session_id, memory_type,"
                " content, metadata, importance, created_at, updated_at, content_hash,"
                " expires_at) VALUES (?, ?, ?, ?, ?, ?, ?::JSON, ?, ?, ?, ?, ?) RETURNING seq",
                [
                    new_id,
                    who.org_id,
                    who.agent_id,
                    session_id,
                    memory_type,
                    content,
                    meta_text,
                    imp,
                    at,
                    at,
                    digest,
                    expiry,
                ],
            ).fetchone()[0]
            info = dict(
                memory_id=new_id,
                seq=seq,
                has_embedding=False,
                embedding_status="pending",
                embedding_model=None,
                created_at=at,
                deduplicated=False,
            )
        if old_id is not None and old_id != info["memory_id"]:
            status, by, info["retired_seq"] = old
            if status == "superseded" and by not in (None, info["memory_id"]):
                raise AgentError.conflict(f"memory {old_id} is already superseded by {by}")
            cur.execute(
                f"UPDATE {T_MEM} SET conflict_status = 'superseded', superseded_by_id = ?,"
                " updated_at = ? WHERE memory_id = ?",
                [info["memory_id"], at, old_id],
            )
        return info

    async with mem.write_lock:
        info = await layer.db.transaction(tx)
        if "retired_seq" in info:
            mem.index.retire(info["retired_seq"])
        if not info["deduplicated"]:
            mem.index.note_unembedded(who.org_id, who.agent_id, info["seq"])
    mid = info["memory_id"]
    job = _Job(mid, info["seq"], who.org_id, who.agent_id, content)
    if not info["deduplicated"] and mem.embedder is not None:
        if wait:
            mem._queued.add(mid)
            waiter = mem.add_waiter(mid)
            await mem.embed_jobs([job], urgent=True)
            info["embedding_status"] = await mem.wait_result(waiter)
        else:
            mem._enqueue(job)
    elif wait and info["embedding_status"] == "pending" and mid in mem._queued:
        info["embedding_status"] = await mem.wait_result(mem.add_waiter(mid))
    if wait and info["embedding_status"] == "embedded":
        info["has_embedding"] = True
        info["embedding_model"] = mem.model_name
    return [
        {
            "memory_id": mid,
            "status": "stored",
            "deduplicated": info["deduplicated"],
            "has_embedding": bool(info["has_embedding"]),
            "embedding_status": info["embedding_status"],
            "embedding_model": info["embedding_model"],
            "content_hash": digest,
            "superseded_id": old_id,
            "created_at": info["created_at"],
        }
    ]


@agent_function(
    "search_memory",
    params=[
        Param("query", "VARCHAR"),
        Param("top_k", "BIGINT", 10),
        Param("memory_type", "VARCHAR", None),
        Param("min_importance", "DOUBLE", None),
        Param("session_id", "VARCHAR", None),
        Param("metadata", "JSON", None),
        Param("include_superseded", "BOOLEAN", False),
        Param("include_shared", "BOOLEAN", False),
    ],
    columns=SEARCH_COLUMNS,
    scope="memory:read",
)
async def search_memory(layer: AgentLayer, who: Identity, **kwargs: Any) -> list[dict[str, Any]]:
    """Search memories by meaning and keywords, ranked by the hybrid score."""
    return await memory_search.search(_mem(layer), who, **kwargs)


async def _fetch_one(mem: Memory, who: Identity, memory_id: str, *, own: bool) -> tuple:
    agents = [who.agent_id] if own else await memory_search.visible_agents(mem, who, True)

    def q(cur: duckdb.DuckDBPyConnection) -> tuple | None:
        return cur.execute(
            f"SELECT {SELECT_COLUMNS} FROM {T_MEM} WHERE memory_id = ? AND org_id = ?"
            " AND agent_id IN (SELECT unnest(?::VARCHAR[]))"
            " AND (expires_at IS NULL OR expires_at > now())",
            [memory_id, who.org_id, agents],
        ).fetchone()

    row = await mem.layer.db.run(q)
    if row is None:
        raise AgentError.not_found(f"memory {memory_id} not found")
    return row


@agent_function(
    "get_memory",
    params=[Param("memory_id", "UUID")],
    columns=MEMORY_COLUMNS,
    scope="memory:read",
)
async def get_memory(layer: AgentLayer, who: Identity, *, memory_id: Any) -> list[dict[str, Any]]:
    """One memory by id (own or granted; superseded ones too)."""
    mem = _mem(layer)
    mid = parse_uuid(memory_id)
    row = await _fetch_one(mem, who, mid, own=False)
    mem.touch([mid])
    return [memory_row(row, mem.pending_access)]


@agent_function(
    "list_memories",
    params=[
        Param("memory_type", "VARCHAR", None),
        Param("embedding_status", "VARCHAR", None),
        Param("session_id", "VARCHAR", None),
        Param("limit", "BIGINT", 50),
        Param("offset", "BIGINT", 0),
        Param("include_superseded", "BOOLEAN", False),
        Param("include_shared", "BOOLEAN", False),
    ],
    columns=MEMORY_COLUMNS,
    scope="memory:read",
)
async def list_memories(
    layer: AgentLayer,
    who: Identity,
    *,
    memory_type: Any = None,
    embedding_status: Any = None,
    session_id: Any = None,
    limit: Any = 50,
    offset: Any = 0,
    include_superseded: Any = False,
    include_shared: Any = False,
) -> list[dict[str, Any]]:
    """The newest memories first; limit is capped at 100."""
    mem = _mem(layer)
    if embedding_status not in (None, "pending", "embedded", "failed"):
        raise AgentError.invalid("embedding_status must be 'pending', 'embedded' or 'failed'")
    limit = 50 if limit is None else int(limit)
    offset = 0 if offset is None else int(offset)
    if limit < 1 or offset < 0:
        raise AgentError.invalid("limit must be at least 1 and offset not negative")
    f = memory_search.Filters(
        who.org_id,
        await memory_search.visible_agents(mem, who, bool(include_shared)),
        include_superseded=bool(include_superseded),
        memory_type=memory_type or None,
        session_id=session_id or None,
        embedding_status=embedding_status,
    )

    def q(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        return cur.execute(
            f"SELECT {SELECT_COLUMNS} FROM {T_MEM} WHERE {f.sql}"
            " ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?",
            [*f.params, min(limit, 100), offset],
        ).fetchall()

    return [memory_row(r, mem.pending_access) for r in await layer.db.run(q)]


def delete_where(cur: duckdb.DuckDBPyConnection, where: str, params: list[Any]) -> list[int]:
    """Delete memories (and vectors) matching `where`; the seqs deleted. In a transaction."""
    rows = cur.execute(
        f"SELECT memory_id::VARCHAR, seq FROM {T_MEM} WHERE {where}", params
    ).fetchall()
    if not rows:
        return []
    ids = [r[0] for r in rows]
    cur.execute(f"DELETE FROM {T_VEC} WHERE memory_id IN (SELECT unnest(?::UUID[]))", [ids])
    cur.execute(f"DELETE FROM {T_MEM} WHERE memory_id IN (SELECT unnest(?::UUID[]))", [ids])
    # A retired fact whose replacement is gone keeps its status but loses the pointer.
    cur.execute(
        f"UPDATE {T_MEM} SET superseded_by_id = NULL"
        " WHERE superseded_by_id IN (SELECT unnest(?::UUID[]))",
        [ids],
    )
    return [r[1] for r in rows]


async def _delete(mem: Memory, where: str, params: list[Any]) -> list[int]:
    async with mem.write_lock:
        seqs = await mem.layer.db.transaction(lambda cur: delete_where(cur, where, params))
        for s in seqs:
            mem.index.remove(s)
    return seqs


@agent_function(
    "delete_memory",
    params=[Param("memory_id", "UUID")],
    columns=[("deleted", "BOOLEAN"), ("memory_id", "UUID")],
    scope="memory:write",
    writes=True,
)
async def delete_memory(
    layer: AgentLayer, who: Identity, *, memory_id: Any
) -> list[dict[str, Any]]:
    """Delete one of the caller's memories and its vector (unknown id: not_found)."""
    mem = _mem(layer)
    mid = parse_uuid(memory_id)
    seqs = await _delete(
        mem, "memory_id = ? AND org_id = ? AND agent_id = ?", [mid, who.org_id, who.agent_id]
    )
    if not seqs:
        raise AgentError.not_found(f"memory {mid} not found")
    mem.pending_access.pop(mid, None)
    return [{"deleted": True, "memory_id": mid}]


@agent_function(
    "memory_embedding_stats",
    params=[],
    columns=[
        ("total", "BIGINT"),
        ("total_embedded", "BIGINT"),
        ("total_pending", "BIGINT"),
        ("total_failed", "BIGINT"),
        ("models", "JSON"),
        ("current_model", "VARCHAR"),
        ("dimensions", "BIGINT"),
        ("queue_depth", "BIGINT"),
        ("migration_in_progress", "BOOLEAN"),
    ],
    scope="memory:read",
)
async def memory_embedding_stats(layer: AgentLayer, who: Identity) -> list[dict[str, Any]]:
    """Embedding status counts of the caller's memories, by model."""
    mem = _mem(layer)

    def q(cur: duckdb.DuckDBPyConnection) -> tuple[tuple, list[tuple]]:
        where = "org_id = ? AND agent_id = ?"
        p = [who.org_id, who.agent_id]
        totals = cur.execute(
            "SELECT count(*), count(*) FILTER (embedding_status = 'embedded'),"
            " count(*) FILTER (embedding_status = 'pending'),"
            f" count(*) FILTER (embedding_status = 'failed') FROM {T_MEM} WHERE {where}",
            p,
        ).fetchone()
        models = cur.execute(
            f"SELECT embedding_model, count(*) FROM {T_MEM} WHERE {where} AND has_embedding"
            " GROUP BY ALL ORDER BY 2 DESC",
            p,
        ).fetchall()
        return totals, models

    totals, models = await layer.db.run(q)
    current = mem.model_name
    return [
        {
            "total": totals[0],
            "total_embedded": totals[1],
            "total_pending": totals[2],
            "total_failed": totals[3],
            "models": [{"model": m, "count": n, "dimensions": mem.index.dims} for m, n in models],
            "current_model": current,
            "dimensions": mem.index.dims,
            "queue_depth": len(mem._queued),
            "migration_in_progress": bool(totals[2]) and any(m != current for m, _ in models),
        }
    ]


@agent_function(
    "reembed_memory",
    params=[
        Param("memory_id", "UUID", None),
        Param("memory_ids", "JSON", None),
        Param("all_failed", "BOOLEAN", False),
        Param("wait", "BOOLEAN", False),
    ],
    columns=[("memory_id", "UUID"), ("status", "VARCHAR")],
    scope="memory:write",
    writes=True,
)
async def reembed_memory(
    layer: AgentLayer,
    who: Identity,
    *,
    memory_id: Any = None,
    memory_ids: Any = None,
    all_failed: Any = False,
    wait: Any = False,
) -> list[dict[str, Any]]:
    """Queue memories for embedding again: one id, a JSON list of ids, or all failed ones."""
    mem = _mem(layer)
    if mem.embedder is None:
        raise AgentError.unavailable("no embedding model is loaded; memories stay 'pending'")
    ids: list[str] = []
    if memory_id is not None:
        ids.append(parse_uuid(memory_id))
    if memory_ids is not None:
        if isinstance(memory_ids, str):
            try:
                memory_ids = json.loads(memory_ids)
            except json.JSONDecodeError:
                raise AgentError.invalid("memory_ids must be a JSON array of UUIDs") from None
        if not isinstance(memory_ids, list) or len(memory_ids) > 1000:
            raise AgentError.invalid("memory_ids must be a JSON array of at most 1000 UUIDs")
        ids += [parse_uuid(x, "memory_ids[]") for x in memory_ids]
    if not ids and not all_failed:
        raise AgentError.invalid("give memory_id, memory_ids or all_failed := true")

    def tx(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        sel = "memory_id IN (SELECT unnest(?::UUID[]))"
        if all_failed:
            sel = f"({sel} OR embedding_status = 'failed')"
        where = f"org_id = ? AND agent_id = ? AND {sel}"
        rows = cur.execute(
            f"SELECT memory_id::VARCHAR, seq, content FROM {T_MEM} WHERE {where}",
            [who.org_id, who.agent_id, ids],
        ).fetchall()
        cur.execute(
            f"UPDATE {T_MEM} SET embedding_status = 'pending', embedding_attempts = 0,"
            f" embedding_error = NULL WHERE {where}",
            [who.org_id, who.agent_id, ids],
        )
        return rows

    async with mem.write_lock:
        rows = await layer.db.transaction(tx)
    found = {r[0] for r in rows}
    if memory_id is not None and memory_ids is None and not all_failed and not found:
        raise AgentError.not_found(f"memory {ids[0]} not found")
    jobs = [_Job(r[0], r[1], who.org_id, who.agent_id, r[2]) for r in rows]
    status = {j.memory_id: "queued" for j in jobs}
    if wait and jobs:
        fresh = [j for j in jobs if j.memory_id not in mem._queued]
        waiters = {j.memory_id: mem.add_waiter(j.memory_id) for j in jobs}
        for j in fresh:
            mem._queued.add(j.memory_id)
        if fresh:
            await mem.embed_jobs(fresh, urgent=True)
        for mid, w in waiters.items():
            status[mid] = await mem.wait_result(w)
    else:
        for j in jobs:
            mem._enqueue(j)
    out = [{"memory_id": r[0], "status": status[r[0]]} for r in rows]
    out += [{"memory_id": i, "status": "skipped"} for i in dict.fromkeys(ids) if i not in found]
    return out


@agent_function(
    "expire_memories",
    params=[Param("dry_run", "BOOLEAN", False)],
    columns=[("expired", "BIGINT"), ("dry_run", "BOOLEAN")],
    scope="memory:write",
    writes=True,
)
async def expire_memories(
    layer: AgentLayer, who: Identity, *, dry_run: Any = False
) -> list[dict[str, Any]]:
    """Delete the caller's memories whose expires_at has passed (they are already hidden)."""
    mem = _mem(layer)
    where = "org_id = ? AND agent_id = ? AND expires_at <= now()"
    params = [who.org_id, who.agent_id]
    if dry_run:
        n = await layer.db.run(
            lambda cur: cur.execute(
                f"SELECT count(*) FROM {T_MEM} WHERE {where}", params
            ).fetchone()[0]
        )
    else:
        n = len(await _delete(mem, where, params))
    return [{"expired": n, "dry_run": bool(dry_run)}]


@agent_function(
    "evict_memories",
    params=[
        Param("max_age_days", "DOUBLE", 30.0),
        Param("min_importance", "DOUBLE", 0.3),
        Param("max_per_agent", "BIGINT", None),
        Param("dry_run", "BOOLEAN", False),
    ],
    columns=[
        ("evicted", "BIGINT"),
        ("by_age", "BIGINT"),
        ("by_confidence", "BIGINT"),
        ("by_cap", "BIGINT"),
        ("dry_run", "BOOLEAN"),
    ],
    scope="memory:write",
    writes=True,
)
async def evict_memories(
    layer: AgentLayer,
    who: Identity,
    *,
    max_age_days: Any = 30.0,
    min_importance: Any = 0.3,
    max_per_agent: Any = None,
    dry_run: Any = False,
) -> list[dict[str, Any]]:
    """Evict per the brief: (older than max_age_days AND importance < min_importance)
    OR confidence < 0.1 OR beyond max_per_agent (lowest importance, then oldest, first)."""
    mem = _mem(layer)
    if max_age_days is None or float(max_age_days) < 0:
        raise AgentError.invalid("max_age_days must be a number >= 0")
    min_imp = memory_search.check_importance(min_importance, "min_importance") or 0.0
    if max_per_agent is not None and int(max_per_agent) < 0:
        raise AgentError.invalid("max_per_agent must be >= 0")
    cutoff = now() - dt.timedelta(days=float(max_age_days))
    await mem.flush_access()
    cap = -1 if max_per_agent is None else int(max_per_agent)
    ranked = (
        f"SELECT memory_id, (created_at < ? AND importance < ?) AS old, confidence < 0.1 AS weak"
        f" FROM {T_MEM} WHERE org_id = ? AND agent_id = ?"
    )
    reasons = (
        f"WITH r AS ({ranked}), kept AS (SELECT memory_id, row_number() OVER"
        f" (ORDER BY m.importance DESC, m.created_at DESC, m.seq DESC) AS rn FROM r"
        f" JOIN {T_MEM} m USING (memory_id) WHERE NOT r.old AND NOT r.weak)"
        " SELECT r.memory_id, CASE WHEN r.old THEN 'age' WHEN r.weak THEN 'confidence'"
        " ELSE 'cap' END AS reason FROM r LEFT JOIN kept USING (memory_id)"
        " WHERE r.old OR r.weak OR (? >= 0 AND kept.rn > ?)"
    )
    params = [cutoff, min_imp, who.org_id, who.agent_id, cap, cap]

    def tx(cur: duckdb.DuckDBPyConnection) -> tuple[list[str], list[int]]:
        rows = cur.execute(f"SELECT memory_id::VARCHAR, reason FROM ({reasons})", params).fetchall()
        seqs = []
        if rows and not dry_run:
            seqs = delete_where(
                cur,
                "memory_id IN (SELECT unnest(?::UUID[]))",
                [[r[0] for r in rows]],
            )
        return [r[1] for r in rows], seqs

    async with mem.write_lock:
        reasons_out, seqs = await layer.db.transaction(tx)
        for s in seqs:
            mem.index.remove(s)
    return [
        {
            "evicted": len(reasons_out),
            "by_age": reasons_out.count("age"),
            "by_confidence": reasons_out.count("confidence"),
            "by_cap": reasons_out.count("cap"),
            "dry_run": bool(dry_run),
        }
    ]


@agent_function(
    "decay_memories",
    params=[Param("rate", "DOUBLE", 0.1), Param("dry_run", "BOOLEAN", False)],
    columns=[("decayed", "BIGINT"), ("rate", "DOUBLE"), ("dry_run", "BOOLEAN")],
    scope="memory:write",
    writes=True,
)
async def decay_memories(
    layer: AgentLayer, who: Identity, *, rate: Any = 0.1, dry_run: Any = False
) -> list[dict[str, Any]]:
    """Confidence decay per the brief: memories not accessed for 7+ days get
    confidence * (1 - rate), never below 0.1; those already at 0.1 are skipped."""
    mem = _mem(layer)
    r = memory_search.check_importance(rate, "rate")
    await mem.flush_access()
    where = (
        "org_id = ? AND agent_id = ? AND confidence > 0.1"
        " AND coalesce(last_accessed, created_at) < now() - INTERVAL 7 DAY"
    )
    params = [who.org_id, who.agent_id]

    def tx(cur: duckdb.DuckDBPyConnection) -> int:
        if dry_run:
            return cur.execute(f"SELECT count(*) FROM {T_MEM} WHERE {where}", params).fetchone()[0]
        return cur.execute(
            f"UPDATE {T_MEM} SET confidence = greatest(confidence * (1 - ?), 0.1) WHERE {where}",
            [r, *params],
        ).fetchone()[0]

    async with mem.write_lock:
        n = await layer.db.transaction(tx)
    return [{"decayed": n, "rate": r, "dry_run": bool(dry_run)}]


@agent_function(
    "grant_memory_access",
    params=[Param("grantee_agent", "VARCHAR")],
    columns=[
        ("owner_agent_id", "VARCHAR"),
        ("grantee_agent_id", "VARCHAR"),
        ("granted", "BOOLEAN"),
    ],
    scope="memory:write",
    writes=True,
)
async def grant_memory_access(
    layer: AgentLayer, who: Identity, *, grantee_agent: Any
) -> list[dict[str, Any]]:
    """Let another agent of the org read (get, list, search with include_shared) my memories."""
    mem = _mem(layer)
    grantee = _text(grantee_agent, "grantee_agent", required=True, limit=1000)
    if grantee == who.agent_id:
        raise AgentError.invalid("an agent always reads its own memories")

    def tx(cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(
            f"INSERT INTO {T_GRANT} VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [who.org_id, who.agent_id, grantee, now()],
        )

    async with mem.write_lock:
        await layer.db.transaction(tx)
    return [{"owner_agent_id": who.agent_id, "grantee_agent_id": grantee, "granted": True}]


@agent_function(
    "revoke_memory_access",
    params=[Param("grantee_agent", "VARCHAR")],
    columns=[
        ("owner_agent_id", "VARCHAR"),
        ("grantee_agent_id", "VARCHAR"),
        ("revoked", "BOOLEAN"),
    ],
    scope="memory:write",
    writes=True,
)
async def revoke_memory_access(
    layer: AgentLayer, who: Identity, *, grantee_agent: Any
) -> list[dict[str, Any]]:
    """Withdraw a grant; revoked is false when there was none."""
    mem = _mem(layer)
    grantee = _text(grantee_agent, "grantee_agent", required=True, limit=1000)

    def tx(cur: duckdb.DuckDBPyConnection) -> int:
        return len(
            cur.execute(
                f"DELETE FROM {T_GRANT} WHERE org_id = ? AND owner_agent_id = ?"
                " AND grantee_agent_id = ? RETURNING 1",
                [who.org_id, who.agent_id, grantee],
            ).fetchall()
        )

    async with mem.write_lock:
        n = await layer.db.transaction(tx)
    return [{"owner_agent_id": who.agent_id, "grantee_agent_id": grantee, "revoked": n > 0}]
