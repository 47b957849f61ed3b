"""REST: agent memory under /v1/organizations/{org_id}/agent-memory (seed 001).

Writes go through the memory agent functions (store_memory, delete_memory,
reembed_memory) acting as the owning agent, so SQL, MCP and REST share one behaviour;
org-wide reads are in proxy.agent.memory.org. An org-level key (hd_live_) speaks for
every agent of its org; an agent key (hd_agent_) only for its own agent: naming
another agent is 403, another agent's memory id is 404 (never revealed).

Decisions: `limit` above 100 is capped at 100 (the seed: "capped at 100"), below 1 is
422; `top_k` above 50 is 422 (the seed: "max 50"); a malformed memory id is 422 in a
body and 404 in a path: `{memory_id:uuid}` path parameters match only UUIDs, so
`DELETE .../search` is 405 (Allow: GET) instead of a failed UUID. Search `score` is
the fused ranking score (0..1] of search_memory (its weighted ranking and its BM25
ranking interleaved: proxy/agent/memory/search.py); `weighted_score` the weighted
score (0..1; cosine similarity, keyword overlap, recency, importance, confidence);
`similarity_score` is the cosine similarity, or the keyword overlap when `score_kind`
is 'keyword' (memory not embedded yet: the seed's token-overlap fallback). An
org-wide search merges each agent's results by score, then weighted score.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from proxy.agent.memory import org as memory_org
from proxy.api.rest.auth import Caller, caller, layer_of
from proxy.api.rest.errors import ErrorBody

router = APIRouter(
    prefix="/v1/organizations/{org_id}/agent-memory",
    tags=["agent memory"],
    responses={400: {"model": ErrorBody, "description": "The body is not valid JSON"}},
)
# Request bodies take JSON types as they are (no "0" -> false, no 1 -> "1").
STRICT = ConfigDict(strict=True)
Who = Annotated[Caller, Depends(caller)]
Status = Literal["pending", "embedded", "failed"]


class MemoryCreate(BaseModel):
    model_config = STRICT
    agent_id: str = Field(min_length=1, max_length=1000, description="The owning agent")
    memory_type: str = Field(min_length=1, max_length=100, description="e.g. semantic, episodic")
    content: str = Field(min_length=1, description="Text to remember (embedded for search)")
    metadata: dict[str, Any] | None = None
    importance: float = Field(0.5, ge=0.0, le=1.0)
    session_id: str | None = Field(None, max_length=1000)
    wait: bool = Field(False, description="Return only once embedded (or failed / timed out)")


class Memory(BaseModel):
    id: str
    org_id: str
    agent_id: str
    memory_type: str
    content: str
    created_at: dt.datetime
    access_count: int
    embedding_provider: str | None = Field(description="'local': models run in-process")
    has_embedding: bool
    embedding_model: str | None
    embedding_dimensions: int | None
    embedding_status: Status
    metadata: dict[str, Any] | None = None
    importance: float
    session_id: str | None = None
    confidence: float
    last_accessed: dt.datetime | None = None
    updated_at: dt.datetime
    expires_at: dt.datetime | None = None


class MemoryCreated(Memory):
    deduplicated: bool = Field(description="The agent already had this exact content")


class SearchHit(BaseModel):
    entry: Memory
    score: float = Field(
        description="Fused rank score, 0..1: the weighted and the keyword (BM25) rankings"
        " interleaved; results sorted by it"
    )
    weighted_score: float = Field(
        description="Weighted score, 0..1: cosine, keyword overlap, recency, importance, confidence"
    )
    similarity_score: float
    keyword_score: float
    score_kind: Literal["hybrid", "keyword"]


class Deleted(BaseModel):
    memory_id: str
    status: Literal["deleted"]


class ModelCount(BaseModel):
    model: str | None
    count: int
    dimensions: int


class EmbeddingStats(BaseModel):
    models: list[ModelCount]
    total: int
    total_embedded: int
    total_pending: int
    total_failed: int
    migration_in_progress: bool
    current_model: str | None
    dimensions: int


class Queued(BaseModel):
    memory_id: str
    status: Literal["queued"]


class BulkReembed(BaseModel):
    model_config = STRICT
    # UUIDs arrive as JSON strings: strict mode would refuse those.
    memory_ids: list[Annotated[uuid.UUID, Field(strict=False)]] = Field(max_length=1000)


class BulkQueued(BaseModel):
    queued: int
    skipped: int = Field(description="Ids not found among the caller's memories")


def _entry(row: dict[str, Any], dims: int) -> dict[str, Any]:
    embedded = bool(row["has_embedding"])
    return {
        **row,
        "id": str(row["memory_id"]),
        "embedding_provider": "local" if row.get("embedding_model") else None,
        "has_embedding": embedded,
        "embedding_dimensions": dims if embedded else None,
    }


def _dims(request: Request) -> int:
    return layer_of(request).memory.index.dims


def _scope_agent(who: Caller, agent_id: str | None) -> str | None:
    """The one agent a read is narrowed to (None: the whole org); 403 for a foreign one."""
    if who.bound_agent is not None:
        return who.as_agent(agent_id).agent_id
    return agent_id or None


@router.post("", response_model=MemoryCreated, summary="Store a memory (memory:write)")
async def create_memory(org_id: str, body: MemoryCreate, request: Request, who: Who):
    who.org(org_id)
    who.require("memory:write")
    identity = who.as_agent(body.agent_id)
    layer = layer_of(request)
    stored = await layer.call(
        "store_memory",
        identity,
        content=body.content,
        memory_type=body.memory_type,
        metadata=body.metadata,
        importance=body.importance,
        session_id=body.session_id,
        wait=body.wait,
    )
    row = await memory_org.get_memory(
        layer, identity.org_id, str(stored[0]["memory_id"]), identity.agent_id
    )
    return {**_entry(row, _dims(request)), "deduplicated": stored[0]["deduplicated"]}


@router.get("", response_model=list[Memory], summary="List memories, newest first (memory:read)")
async def list_memories(
    org_id: str,
    request: Request,
    who: Who,
    agent_id: str | None = None,
    memory_type: str | None = None,
    limit: Annotated[int, Query(ge=1, description="Capped at 100")] = 50,
    embedding_model: str | None = None,
    embedding_status: Status | None = None,
):
    who.org(org_id)
    who.require("memory:read")
    rows = await memory_org.list_memories(
        layer_of(request),
        who.org_id,
        agent_id=_scope_agent(who, agent_id),
        memory_type=memory_type,
        embedding_status=embedding_status,
        embedding_model=embedding_model,
        limit=limit,
    )
    dims = _dims(request)
    return [_entry(r, dims) for r in rows]


@router.get(
    "/search", response_model=list[SearchHit], summary="Search memories by meaning (memory:read)"
)
async def search_memories(
    org_id: str,
    request: Request,
    who: Who,
    query: Annotated[str, Query(min_length=1)],
    agent_id: str | None = None,
    top_k: Annotated[int, Query(ge=1, le=50)] = 10,
):
    who.org(org_id)
    who.require("memory:read")
    layer = layer_of(request)
    one = _scope_agent(who, agent_id)
    agents = [one] if one else await memory_org.agents_with_memories(layer, who.org_id)
    hits: list[dict[str, Any]] = []
    for agent in agents:  # each agent's best top_k, merged by the same scores
        hits += await layer.call("search_memory", who.as_agent(agent), query=query, top_k=top_k)
    hits.sort(key=lambda r: (-r["score"], -r["weighted_score"], -r["created_at"].timestamp()))
    dims = _dims(request)
    return [
        {
            "entry": _entry(h, dims),
            "score": h["score"],
            "weighted_score": h["weighted_score"],
            "similarity_score": h["similarity_score"],
            "keyword_score": h["keyword_score"],
            "score_kind": h["score_kind"],
        }
        for h in hits[:top_k]
    ]


@router.get(
    "/embedding-stats",
    response_model=EmbeddingStats,
    summary="Embedding status counts of the org's memories (memory:read)",
)
async def embedding_stats(org_id: str, request: Request, who: Who):
    who.org(org_id)
    who.require("memory:read")
    return await memory_org.embedding_stats(layer_of(request), who.org_id, who.bound_agent)


async def owner_identity(who: Caller, request: Request, memory_id: str):
    """Act as the agent owning the memory (404 for unknown, foreign-org, other agent's)."""
    agent = await memory_org.owner(layer_of(request), who.org_id, memory_id, who.bound_agent)
    return who.as_agent(agent)


@router.delete(
    "/{memory_id:uuid}", response_model=Deleted, summary="Delete a memory (memory:write)"
)
async def delete_memory(org_id: str, memory_id: uuid.UUID, request: Request, who: Who):
    who.org(org_id)
    who.require("memory:write")
    mid = str(memory_id)
    identity = await owner_identity(who, request, mid)
    await layer_of(request).call("delete_memory", identity, memory_id=mid)
    return {"memory_id": mid, "status": "deleted"}


@router.post(
    "/bulk-re-embed",
    response_model=BulkQueued,
    summary="Queue several memories for embedding again (memory:write)",
)
async def bulk_reembed(org_id: str, body: BulkReembed, request: Request, who: Who):
    who.org(org_id)
    who.require("memory:write")
    layer = layer_of(request)
    ids = list(dict.fromkeys(str(i) for i in body.memory_ids))
    found = await memory_org.owners(layer, who.org_id, ids, who.bound_agent)
    by_agent: dict[str, list[str]] = {}
    for mid, agent in found.items():
        by_agent.setdefault(agent, []).append(mid)
    queued = 0
    for agent, mids in by_agent.items():
        rows = await layer.call("reembed_memory", who.as_agent(agent), memory_ids=mids)
        queued += sum(1 for r in rows if r["status"] != "skipped")
    return {"queued": queued, "skipped": len(ids) - queued}


@router.post(
    "/{memory_id:uuid}/re-embed",
    response_model=Queued,
    summary="Queue a memory for embedding again with the current model (memory:write)",
)
async def reembed(org_id: str, memory_id: uuid.UUID, request: Request, who: Who):
    who.org(org_id)
    who.require("memory:write")
    mid = str(memory_id)
    identity = await owner_identity(who, request, mid)
    await layer_of(request).call("reembed_memory", identity, memory_id=mid)
    return {"memory_id": mid, "status": "queued"}
