"""The memory operations, registered as agent functions (SQL, MCP and REST share them).

Errors: an unknown memory id and another agent's (or org's) memory id are the same
`not_found`, for every operation that names one (get, delete, reembed, supersedes).
Maintenance, stats, re-embedding and grants are in memory_admin.py.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import TYPE_CHECKING, Any, NamedTuple

from proxy.agent.memory import search as memory_search
from proxy.agent.memory.args import content_hash, now, parse_metadata, parse_uuid, text_arg
from proxy.agent.memory.rows import refresh_index
from proxy.agent.memory.schema import (
    MEMORY_COLUMNS,
    RETURNING_ROWS,
    SELECT_COLUMNS,
    T_MEM,
    T_VEC,
)
from proxy.agent.memory.service import (
    LIVE,
    MAX_CONTENT_BYTES,
    MAX_METADATA_BYTES,
    MAX_TYPE_CHARS,
    EmbedJob,
    Memory,
    memory_row,
)
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext

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


def memory_of(layer: AgentContext) -> Memory:
    mem: Memory = layer.memory
    mem.check_enabled()
    return mem


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
        Param("content", "VARCHAR", description="The memory text", nonempty=True),
        Param(
            "memory_type",
            "VARCHAR",
            "fact",
            "fact, observation, instruction, preference or episode",
        ),
        Param("metadata", "JSON", None, "Key-value metadata", json_shape="object"),
        Param("importance", "DOUBLE", 0.5, "Importance 0.0-1.0", minimum=0, maximum=1),
        Param("session_id", "VARCHAR", None, "The session the memory belongs to"),
        Param("supersedes", "UUID", None, "A memory this one replaces (it stops showing up)"),
        Param("expires_at", "TIMESTAMPTZ", None, "Forget the memory after this time"),
        Param("ttl_seconds", "BIGINT", None, "Forget the memory after this many seconds"),
        Param("wait", "BOOLEAN", False, "Return only once the memory is searchable"),
    ],
    columns=STORE_COLUMNS,
    scope="memory:write",
    writes=True,
    mcp=McpTool(
        ("content", "memory_type", "metadata", "importance"),
        "Store a memory in this agent's long-term memory; returns its memory_id.",
    ),
)
async def store_memory(
    layer: AgentContext,
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
    mem = memory_of(layer)
    content = text_arg(content, "content", required=True)
    size = len(content.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise AgentError.invalid(
            f"content is {size} bytes; a memory holds at most {MAX_CONTENT_BYTES} bytes",
            hint="split the text into several memories",
        )
    memory_type = text_arg(
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
    session_id = text_arg(session_id, "session_id", limit=1000)
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
        # Every check before the first write: the group commit (write_batch.py) lets an
        # AgentError fail only its own store when nothing of it was written.
        target = dup[0] if dup is not None else new_id
        if old_id is not None and old_id != target:
            status, by, _ = old
            if status == "superseded" and by not in (None, target):
                raise AgentError.conflict(f"memory {old_id} is already superseded by {by}")
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
            info["retired"] = cur.execute(
                f"UPDATE {T_MEM} SET conflict_status = 'superseded', superseded_by_id = ?,"
                f" updated_at = ? WHERE memory_id = ? {RETURNING_ROWS}",
                [info["memory_id"], at, old_id],
            ).fetchall()
        return info

    def indexed(info: dict[str, Any]) -> None:  # under the write lock, in commit order
        refresh_index(mem.index, info.pop("retired", ()))
        if not info["deduplicated"]:
            mem.index.note_unembedded(who.org_id, who.agent_id, info["seq"])

    info = await mem.stores.run(tx, indexed)
    mid = info["memory_id"]
    job = EmbedJob(mid, info["seq"], who.org_id, who.agent_id, content)
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
        Param("query", "VARCHAR", description="What to look for", nonempty=True),
        Param("top_k", "BIGINT", 10, "Most results to return", minimum=1),
        Param("memory_type", "VARCHAR", None, "Only memories of this type"),
        Param("min_importance", "DOUBLE", None, "Only memories at least this important"),
        Param("session_id", "VARCHAR", None, "Only memories of this session"),
        Param(
            "metadata",
            "JSON",
            None,
            "Only memories whose metadata has these key-value pairs",
            json_shape="object",
        ),
        Param("include_superseded", "BOOLEAN", False, "Also memories another one replaced"),
        Param("include_shared", "BOOLEAN", False, "Also memories other agents granted access to"),
    ],
    columns=SEARCH_COLUMNS,
    scope="memory:read",
    mcp=McpTool(
        ("query", "top_k", "memory_type", "min_importance"),
        "Find this agent's memories by meaning and keywords, best first.",
    ),
)
async def search_memory(layer: AgentContext, who: Identity, **kwargs: Any) -> list[dict[str, Any]]:
    """Search memories by meaning and keywords, ranked by the hybrid score."""
    return await memory_search.search(memory_of(layer), who, **kwargs)


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
    params=[Param("memory_id", "UUID", description="The memory's UUID")],
    columns=MEMORY_COLUMNS,
    scope="memory:read",
)
async def get_memory(layer: AgentContext, who: Identity, *, memory_id: Any) -> list[dict[str, Any]]:
    """One memory by id (own or granted; superseded ones too)."""
    mem = memory_of(layer)
    mid = parse_uuid(memory_id)
    row = await _fetch_one(mem, who, mid, own=False)
    mem.access.touch([mid])
    return [memory_row(row, mem.access.pending)]


@agent_function(
    "list_memories",
    params=[
        Param("memory_type", "VARCHAR", None, "Only memories of this type"),
        Param(
            "embedding_status",
            "VARCHAR",
            None,
            "Only memories in this embedding state",
            enum=("pending", "embedded", "failed"),
        ),
        Param("session_id", "VARCHAR", None, "Only memories of this session"),
        Param("limit", "BIGINT", 50, "Most memories to return (at most 100)", minimum=1),
        Param("offset", "BIGINT", 0, "Skip this many of the newest first", minimum=0),
        Param("include_superseded", "BOOLEAN", False, "Also memories another one replaced"),
        Param("include_shared", "BOOLEAN", False, "Also memories other agents granted access to"),
    ],
    columns=MEMORY_COLUMNS,
    scope="memory:read",
)
async def list_memories(
    layer: AgentContext,
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
    mem = memory_of(layer)
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

    return [memory_row(r, mem.access.pending) for r in await layer.db.run(q)]


class Deleted(NamedTuple):
    seqs: list[int]  # of the memories deleted
    unlinked: list[tuple[Any, ...]]  # RETURNING_ROWS of retired memories that lost a pointer


def delete_where(cur: duckdb.DuckDBPyConnection, where: str, params: list[Any]) -> Deleted:
    """Delete memories (and vectors) matching `where`. In a transaction; the caller hands
    the result to `apply_delete` after the commit."""
    rows = cur.execute(
        f"SELECT memory_id::VARCHAR, seq FROM {T_MEM} WHERE {where}", params
    ).fetchall()
    if not rows:
        return Deleted([], [])
    ids = [r[0] for r in rows]
    cur.execute(f"DELETE FROM {T_VEC} WHERE memory_id IN (SELECT unnest(?::UUID[]))", [ids])
    cur.execute(f"DELETE FROM {T_MEM} WHERE memory_id IN (SELECT unnest(?::UUID[]))", [ids])
    # A retired fact whose replacement is gone keeps its status but loses the pointer.
    unlinked = cur.execute(
        f"UPDATE {T_MEM} SET superseded_by_id = NULL"
        f" WHERE superseded_by_id IN (SELECT unnest(?::UUID[])) {RETURNING_ROWS}",
        [ids],
    ).fetchall()
    return Deleted([r[1] for r in rows], unlinked)


def apply_delete(mem: Memory, deleted: Deleted) -> None:
    """The index follows a committed `delete_where`."""
    for s in deleted.seqs:
        mem.index.remove(s)
    refresh_index(mem.index, deleted.unlinked)


async def delete_memories(mem: Memory, where: str, params: list[Any]) -> list[int]:
    async with mem.write_lock:
        deleted = await mem.layer.db.transaction(lambda cur: delete_where(cur, where, params))
        apply_delete(mem, deleted)
    return deleted.seqs


@agent_function(
    "delete_memory",
    params=[Param("memory_id", "UUID", description="The memory's UUID")],
    columns=[("deleted", "BOOLEAN"), ("memory_id", "UUID")],
    scope="memory:write",
    writes=True,
    mcp=McpTool(("memory_id",), "Delete one of this agent's memories."),
)
async def delete_memory(
    layer: AgentContext, who: Identity, *, memory_id: Any
) -> list[dict[str, Any]]:
    """Delete one of the caller's memories and its vector (unknown id: not_found)."""
    mem = memory_of(layer)
    mid = parse_uuid(memory_id)
    seqs = await delete_memories(
        mem, "memory_id = ? AND org_id = ? AND agent_id = ?", [mid, who.org_id, who.agent_id]
    )
    if not seqs:
        raise AgentError.not_found(f"memory {mid} not found")
    mem.access.pending.pop(mid, None)
    return [{"deleted": True, "memory_id": mid}]
