"""Memory maintenance and administration, registered as agent functions.

Embedding stats and re-embedding, and the explicit maintenance commands of seed 004:
expire, evict and decay run only when called, only over the caller's own memories,
return counts, and have a `dry_run` that changes nothing. Grants share memories
read-only with another agent.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from proxy.agent.memory import search as memory_search
from proxy.agent.memory.args import now, parse_uuid, text_arg
from proxy.agent.memory.embed_pump import EmbedJob
from proxy.agent.memory.rows import refresh_index
from proxy.agent.memory.schema import COL, RETURNING_ROWS, T_GRANT, T_MEM
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import Param, agent_function

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext

from proxy.agent.memory.functions import (
    Deleted,
    apply_delete,
    delete_memories,
    delete_where,
    memory_of,
)


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
async def memory_embedding_stats(layer: AgentContext, who: Identity) -> list[dict[str, Any]]:
    """Embedding status counts of the caller's memories, by model."""
    mem = memory_of(layer)

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
        Param("memory_id", "UUID", None, "One memory to embed again"),
        Param("memory_ids", "JSON", None, "Up to 1000 memory UUIDs", json_shape="array"),
        Param("all_failed", "BOOLEAN", False, "Also every memory whose embedding failed"),
        Param("wait", "BOOLEAN", False, "Return once the embeddings are done"),
    ],
    columns=[("memory_id", "UUID"), ("status", "VARCHAR")],
    scope="memory:write",
    writes=True,
)
async def reembed_memory(
    layer: AgentContext,
    who: Identity,
    *,
    memory_id: Any = None,
    memory_ids: Any = None,
    all_failed: Any = False,
    wait: Any = False,
) -> list[dict[str, Any]]:
    """Queue memories for embedding again: one id, a JSON list of ids, or all failed ones."""
    mem = memory_of(layer)
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
        return cur.execute(
            f"UPDATE {T_MEM} SET embedding_status = 'pending', embedding_attempts = 0,"
            f" embedding_error = NULL WHERE {where} {RETURNING_ROWS}",
            [who.org_id, who.agent_id, ids],
        ).fetchall()

    async with mem.write_lock:
        changed = await layer.db.transaction(tx)
        refresh_index(mem.index, changed)  # an embedded memory keeps its old vector meanwhile
    content = COL["content"] + 1  # RETURNING_ROWS: seq first
    rows = [(r[1], r[0], r[content]) for r in changed]
    found = {r[0] for r in rows}
    if memory_id is not None and memory_ids is None and not all_failed and not found:
        raise AgentError.not_found(f"memory {ids[0]} not found")
    jobs = [EmbedJob(r[0], r[1], who.org_id, who.agent_id, r[2]) for r in rows]
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
    params=[Param("dry_run", "BOOLEAN", False, "Only count, delete nothing")],
    columns=[("expired", "BIGINT"), ("dry_run", "BOOLEAN")],
    scope="memory:write",
    writes=True,
)
async def expire_memories(
    layer: AgentContext, who: Identity, *, dry_run: Any = False
) -> list[dict[str, Any]]:
    """Delete the caller's memories whose expires_at has passed (they are already hidden)."""
    mem = memory_of(layer)
    where = "org_id = ? AND agent_id = ? AND expires_at <= now()"
    params = [who.org_id, who.agent_id]
    if dry_run:
        n = await layer.db.run(
            lambda cur: cur.execute(
                f"SELECT count(*) FROM {T_MEM} WHERE {where}", params
            ).fetchone()[0]
        )
    else:
        n = len(await delete_memories(mem, where, params))
    return [{"expired": n, "dry_run": bool(dry_run)}]


@agent_function(
    "evict_memories",
    params=[
        Param(
            "max_age_days", "DOUBLE", 30.0, "Age in days past which unimportant ones go", minimum=0
        ),
        Param(
            "min_importance",
            "DOUBLE",
            0.3,
            "Old memories less important than this go",
            minimum=0,
            maximum=1,
        ),
        Param("max_per_agent", "BIGINT", None, "Keep at most this many memories", minimum=0),
        Param("dry_run", "BOOLEAN", False, "Only count, delete nothing"),
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
    layer: AgentContext,
    who: Identity,
    *,
    max_age_days: Any = 30.0,
    min_importance: Any = 0.3,
    max_per_agent: Any = None,
    dry_run: Any = False,
) -> list[dict[str, Any]]:
    """Delete the caller's memories older than max_age_days AND less important than
    min_importance, those with confidence < 0.1, and those beyond max_per_agent (lowest
    importance, then oldest, first); counts by reason."""
    mem = memory_of(layer)
    if max_age_days is None or float(max_age_days) < 0:
        raise AgentError.invalid("max_age_days must be a number >= 0")
    min_imp = memory_search.check_importance(min_importance, "min_importance") or 0.0
    if max_per_agent is not None and int(max_per_agent) < 0:
        raise AgentError.invalid("max_per_agent must be >= 0")
    cutoff = now() - dt.timedelta(days=float(max_age_days))
    await mem.access.flush()
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

    def tx(cur: duckdb.DuckDBPyConnection) -> tuple[list[str], Deleted | None]:
        rows = cur.execute(f"SELECT memory_id::VARCHAR, reason FROM ({reasons})", params).fetchall()
        deleted = None
        if rows and not dry_run:
            deleted = delete_where(
                cur,
                "memory_id IN (SELECT unnest(?::UUID[]))",
                [[r[0] for r in rows]],
            )
        return [r[1] for r in rows], deleted

    async with mem.write_lock:
        reasons_out, deleted = await layer.db.transaction(tx)
        if deleted is not None:
            apply_delete(mem, deleted)
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
    params=[
        Param("rate", "DOUBLE", 0.1, "Fraction of confidence lost", minimum=0, maximum=1),
        Param("dry_run", "BOOLEAN", False, "Only count, change nothing"),
    ],
    columns=[("decayed", "BIGINT"), ("rate", "DOUBLE"), ("dry_run", "BOOLEAN")],
    scope="memory:write",
    writes=True,
)
async def decay_memories(
    layer: AgentContext, who: Identity, *, rate: Any = 0.1, dry_run: Any = False
) -> list[dict[str, Any]]:
    """Lower the confidence of the caller's memories not accessed for 7+ days to
    confidence * (1 - rate), never below 0.1 (those already at 0.1 are skipped)."""
    mem = memory_of(layer)
    r = memory_search.check_importance(rate, "rate")
    await mem.access.flush()
    where = (
        "org_id = ? AND agent_id = ? AND confidence > 0.1"
        " AND coalesce(last_accessed, created_at) < now() - INTERVAL 7 DAY"
    )
    params = [who.org_id, who.agent_id]

    def tx(cur: duckdb.DuckDBPyConnection) -> int | list[tuple[int, float]]:
        if dry_run:
            return cur.execute(f"SELECT count(*) FROM {T_MEM} WHERE {where}", params).fetchone()[0]
        return cur.execute(
            f"UPDATE {T_MEM} SET confidence = greatest(confidence * (1 - ?), 0.1) WHERE {where}"
            f" {RETURNING_ROWS}",
            [r, *params],
        ).fetchall()

    async with mem.write_lock:
        done = await layer.db.transaction(tx)
        if isinstance(done, list):
            refresh_index(mem.index, done)
    n = done if isinstance(done, int) else len(done)
    return [{"decayed": n, "rate": r, "dry_run": bool(dry_run)}]


@agent_function(
    "grant_memory_access",
    params=[Param("grantee_agent", "VARCHAR", description="The agent that may read them")],
    columns=[
        ("owner_agent_id", "VARCHAR"),
        ("grantee_agent_id", "VARCHAR"),
        ("granted", "BOOLEAN"),
    ],
    scope="memory:write",
    writes=True,
)
async def grant_memory_access(
    layer: AgentContext, who: Identity, *, grantee_agent: Any
) -> list[dict[str, Any]]:
    """Let another agent of the org read (get, list, search with include_shared) my memories."""
    mem = memory_of(layer)
    grantee = text_arg(grantee_agent, "grantee_agent", required=True, limit=1000)
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
    params=[Param("grantee_agent", "VARCHAR", description="The agent that loses access")],
    columns=[
        ("owner_agent_id", "VARCHAR"),
        ("grantee_agent_id", "VARCHAR"),
        ("revoked", "BOOLEAN"),
    ],
    scope="memory:write",
    writes=True,
)
async def revoke_memory_access(
    layer: AgentContext, who: Identity, *, grantee_agent: Any
) -> list[dict[str, Any]]:
    """Withdraw a grant; revoked is false when there was none."""
    mem = memory_of(layer)
    grantee = text_arg(grantee_agent, "grantee_agent", required=True, limit=1000)

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
