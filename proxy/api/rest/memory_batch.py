"""REST: many memories in one call, `POST /v1/organizations/{org_id}/agent-memory/batch`.

A thin route over the `store_memories` agent function (acting as the owning agent), so
dedup (against existing memories and within the batch), supersede, the embedding at
the model's batch size and the triggers behave as over SQL and MCP. All or none are
stored: one invalid memory is a 422 naming its position.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from proxy.agent.memory.store import MAX_BATCH
from proxy.api.rest.auth import Caller, caller, layer_of
from proxy.api.rest.errors import ErrorBody

router = APIRouter(
    prefix="/v1/organizations/{org_id}/agent-memory",
    tags=["agent memory"],
    responses={
        400: {"model": ErrorBody, "description": "The body is not valid JSON"},
        409: {"model": ErrorBody, "description": "A superseded memory is already superseded"},
    },
)
STRICT = ConfigDict(strict=True)
Who = Annotated[Caller, Depends(caller)]


class BatchItem(BaseModel):
    model_config = STRICT
    content: str = Field(min_length=1, description="Text to remember (embedded for search)")
    memory_type: str | None = Field(None, min_length=1, max_length=100)
    metadata: dict[str, Any] | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0)
    session_id: str | None = Field(None, max_length=1000)
    supersedes: Annotated[uuid.UUID, Field(strict=False)] | None = Field(
        None, description="A memory this one replaces"
    )
    ttl_seconds: int | None = Field(None, gt=0)


class BatchCreate(BaseModel):
    model_config = STRICT
    agent_id: str = Field(min_length=1, max_length=1000, description="The owning agent")
    memories: list[BatchItem] = Field(min_length=1, max_length=MAX_BATCH)
    memory_type: str = Field("fact", min_length=1, max_length=100, description="Default type")
    importance: float = Field(0.5, ge=0.0, le=1.0, description="Default importance")
    wait: bool = Field(False, description="Return only once every memory is embedded")


class BatchStored(BaseModel):
    ordinality: int = Field(description="The input's position, from 1")
    memory_id: str
    status: Literal["stored"]
    deduplicated: bool = Field(description="This exact content was already stored")
    embedding_status: Literal["pending", "embedded", "failed", "deleted"]
    superseded_id: str | None = None
    created_at: dt.datetime


@router.post(
    "/batch",
    response_model=list[BatchStored],
    summary="Store many memories in one call (memory:write)",
)
async def create_memories(org_id: str, body: BatchCreate, request: Request, who: Who):
    who.org(org_id)
    who.require("memory:write")
    identity = who.as_agent(body.agent_id)
    items = [
        {
            k: (str(v) if k == "supersedes" else v)
            for k, v in m.model_dump().items()
            if v is not None
        }
        for m in body.memories
    ]
    rows = await layer_of(request).call(
        "store_memories",
        identity,
        contents=items,
        memory_type=body.memory_type,
        importance=body.importance,
        wait=body.wait,
    )
    return [
        {**r, "memory_id": str(r["memory_id"]), "superseded_id": r["superseded_id"]} for r in rows
    ]
