"""The memory operations, registered as agent functions (SQL, MCP and REST share them).

Errors: an unknown memory id and another agent's (or org's) memory id are the same
`not_found`, for every operation that names one (get, delete, reembed, supersedes).
Maintenance, stats, re-embedding and grants are in memory_admin.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from proxy.agent.memory import search as memory_search
from proxy.agent.memory.args import parse_uuid
from proxy.agent.memory.rows import refresh_index
from proxy.agent.memory.schema import (
    MEMORY_COLUMNS,
    RETURNING_ROWS,
    SELECT_COLUMNS,
    T_MEM,
    T_VEC,
)
from proxy.agent.memory.service import (
    Memory,
    memory_row,
)

# store_memory and store_memories register first (the README and MCP list that order).
from proxy.agent.memory.store import memory_of
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function
from proxy.core.sqltext import in_values

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext

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
    ("weighted_score", "DOUBLE"),
    ("score_kind", "VARCHAR"),
    ("created_at", "TIMESTAMPTZ"),
    ("conflict_status", "VARCHAR"),
    ("superseded_by_id", "UUID"),
    ("has_embedding", "BOOLEAN"),
    ("embedding_status", "VARCHAR"),
    ("access_count", "BIGINT"),
    ("confidence", "DOUBLE"),
)


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
    # From SQL it runs on the client connection's own thread: it reads the vector index
    # (made for readers on other threads), the agent database (pooled cursors), the model
    # (EmbeddingWorker.embed_now, thread-safe) and counts accesses (AccessTracker.touch,
    # locked); it waits for the journal with futures of its own loop (journal.settled).
    any_loop=True,
)
async def search_memory(layer: AgentContext, who: Identity, **kwargs: Any) -> list[dict[str, Any]]:
    """Search memories by meaning and keywords: weighted and keyword ranks fused (score)."""
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
    ids: list[str]  # the same memories' ids
    unlinked: list[tuple[Any, ...]]  # RETURNING_ROWS of retired memories that lost a pointer


def delete_where(cur: duckdb.DuckDBPyConnection, where: str, params: list[Any]) -> Deleted:
    """Delete memories (and vectors) matching `where`. In a transaction; the caller hands
    the result to `apply_delete` after the commit."""
    rows = cur.execute(
        f"SELECT memory_id::VARCHAR, seq FROM {T_MEM} WHERE {where}", params
    ).fetchall()
    if not rows:
        return Deleted([], [], [])
    ids = [r[0] for r in rows]
    by_id, id_params = in_values("memory_id", ids, "UUID")  # no hash join for a few
    cur.execute(f"DELETE FROM {T_VEC} WHERE {by_id}", id_params)
    cur.execute(f"DELETE FROM {T_MEM} WHERE {by_id}", id_params)
    # A retired fact whose replacement is gone keeps its status but loses the pointer.
    by_old, old_params = in_values("superseded_by_id", ids, "UUID")
    unlinked = cur.execute(
        f"UPDATE {T_MEM} SET superseded_by_id = NULL WHERE {by_old} {RETURNING_ROWS}",
        old_params,
    ).fetchall()
    return Deleted([r[1] for r in rows], ids, unlinked)


def apply_delete(mem: Memory, deleted: Deleted) -> None:
    """The index follows a committed `delete_where`."""
    for s in deleted.seqs:
        mem.index.remove(s)
    refresh_index(mem.index, deleted.unlinked)
    if mem.shared is not None:
        mem.shared.deleted(deleted.ids)


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
