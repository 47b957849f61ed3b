"""Organisation-wide memory reads for the REST control plane.

The memory agent functions act as one agent (identity = org + agent). An org-level
API key on REST speaks for the whole organisation: it lists memories of every agent,
finds which agent owns a memory id (to delete or re-embed it as that agent, through
the same agent functions), and counts embedding status over the org. These helpers
only read; every write still goes through memory_functions / memory_admin.

`agent_id` narrows a helper to one agent (an agent-bound key, or an explicit filter).
Reads never count as accesses: listing is not recall.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.agent.memory.schema import SELECT_COLUMNS, T_MEM
from proxy.agent.memory.service import LIVE, memory_row
from proxy.core.errors import AgentError

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext
    from proxy.agent.memory.service import Memory

EMBEDDING_STATUSES = ("pending", "embedded", "failed")
MAX_LIST = 100


def _memory(layer: AgentContext) -> Memory:
    mem: Memory = layer.memory
    mem.check_enabled()
    return mem


def _scope(org_id: str, agent_id: str | None) -> tuple[str, list[Any]]:
    if agent_id is None:
        return "org_id = ?", [org_id]
    return "org_id = ? AND agent_id = ?", [org_id, agent_id]


async def list_memories(
    layer: AgentContext,
    org_id: str,
    *,
    agent_id: str | None = None,
    memory_type: str | None = None,
    embedding_status: str | None = None,
    embedding_model: str | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """Live memories of the org (or one agent), newest first; limit capped at 100."""
    mem = _memory(layer)
    if embedding_status is not None and embedding_status not in EMBEDDING_STATUSES:
        raise AgentError.invalid("embedding_status must be 'pending', 'embedded' or 'failed'")
    if limit < 1:
        raise AgentError.invalid("limit must be at least 1")
    where, params = _scope(org_id, agent_id)
    where += f" AND {LIVE}"
    for column, value in (
        ("memory_type", memory_type),
        ("embedding_status", embedding_status),
        ("embedding_model", embedding_model),
    ):
        if value is not None:
            where += f" AND {column} = ?"
            params.append(value)

    def q(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        return cur.execute(
            f"SELECT {SELECT_COLUMNS} FROM {T_MEM} WHERE {where}"
            " ORDER BY created_at DESC, seq DESC LIMIT ?",
            [*params, min(limit, MAX_LIST)],
        ).fetchall()

    await layer.journal.settled_all()  # stores acknowledged so far
    return [memory_row(r, mem.access.pending) for r in await layer.db.run(q)]


async def get_memory(
    layer: AgentContext, org_id: str, memory_id: str, agent_id: str | None = None
) -> dict[str, Any]:
    """One memory of the org (or of one agent) by id, without counting an access."""
    mem = _memory(layer)
    where, params = _scope(org_id, agent_id)

    def q(cur: duckdb.DuckDBPyConnection) -> tuple | None:
        return cur.execute(
            f"SELECT {SELECT_COLUMNS} FROM {T_MEM} WHERE memory_id = ? AND {where}",
            [memory_id, *params],
        ).fetchone()

    await layer.journal.settled_all()  # stores acknowledged so far
    row = await layer.db.run(q)
    if row is None:
        raise AgentError.not_found(f"memory {memory_id} not found")
    return memory_row(row, mem.access.pending)


async def owners(
    layer: AgentContext, org_id: str, memory_ids: list[str], agent_id: str | None = None
) -> dict[str, str]:
    """memory id -> owning agent, for the ids that exist in the org (or the one agent)."""
    _memory(layer)
    if not memory_ids:
        return {}
    where, params = _scope(org_id, agent_id)

    def q(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        return cur.execute(
            f"SELECT memory_id::VARCHAR, agent_id FROM {T_MEM}"
            f" WHERE memory_id IN (SELECT unnest(?::UUID[])) AND {where}",
            [memory_ids, *params],
        ).fetchall()

    await layer.journal.settled_all()  # stores acknowledged so far
    return dict(await layer.db.run(q))


async def owner(
    layer: AgentContext, org_id: str, memory_id: str, agent_id: str | None = None
) -> str:
    """The agent owning a memory of the org; not_found for unknown or foreign ids."""
    found = await owners(layer, org_id, [memory_id], agent_id)
    if memory_id not in found:
        raise AgentError.not_found(f"memory {memory_id} not found")
    return found[memory_id]


async def agents_with_memories(layer: AgentContext, org_id: str) -> list[str]:
    """Every agent of the org that has at least one memory."""
    _memory(layer)
    await layer.journal.settled_all()  # stores acknowledged so far
    rows = await layer.db.run(
        lambda cur: cur.execute(
            f"SELECT DISTINCT agent_id FROM {T_MEM} WHERE org_id = ? ORDER BY 1", [org_id]
        ).fetchall()
    )
    return [r[0] for r in rows]


async def embedding_stats(
    layer: AgentContext, org_id: str, agent_id: str | None = None
) -> dict[str, Any]:
    """Embedding status counts of the org's (or one agent's) memories, by model.

    Same definitions as memory_admin.memory_embedding_stats, over a wider scope."""
    mem = _memory(layer)
    where, params = _scope(org_id, agent_id)

    def q(cur: duckdb.DuckDBPyConnection) -> tuple[tuple, list[tuple]]:
        totals = cur.execute(
            "SELECT count(*), count(*) FILTER (embedding_status = 'embedded'),"
            " count(*) FILTER (embedding_status = 'pending'),"
            f" count(*) FILTER (embedding_status = 'failed') FROM {T_MEM} WHERE {where}",
            params,
        ).fetchone()
        models = cur.execute(
            f"SELECT embedding_model, count(*) FROM {T_MEM} WHERE {where} AND has_embedding"
            " GROUP BY ALL ORDER BY 2 DESC, 1",
            params,
        ).fetchall()
        return totals, models

    await layer.journal.settled_all()  # stores acknowledged so far
    totals, models = await layer.db.run(q)
    current = mem.model_name
    return {
        "models": [{"model": m, "count": n, "dimensions": mem.index.dims} for m, n in models],
        "total": totals[0],
        "total_embedded": totals[1],
        "total_pending": totals[2],
        "total_failed": totals[3],
        "current_model": current,
        "dimensions": mem.index.dims,
        # Pending work while vectors of another model exist: a model switch under way.
        "migration_in_progress": bool(totals[2]) and any(m != current for m, _ in models),
    }
