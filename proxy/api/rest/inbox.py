"""REST: the caller's trigger inbox (agent_notify messages) under /v1/organizations/{org_id}/inbox.

The inbox belongs to an agent: an agent key reads its own agent's, an org key the inbox of
its HTTP agent identity (the X-HatiData-Agent-Id header, else the server's default agent),
never another agent's. Reading needs trigger:read, as agent_inbox does over SQL and MCP;
acknowledging (marking read) is bookkeeping on the caller's own rows, so it needs the same.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field

from proxy.api.rest.auth import Caller, caller, layer_of

router = APIRouter(prefix="/v1/organizations/{org_id}/inbox", tags=["semantic triggers"])
Who = Annotated[Caller, Depends(caller)]
Limit = Annotated[int, Query(ge=1, le=10_000, description="Most notifications to return")]


class Notification(BaseModel):
    id: str
    agent_id: str = Field(description="The recipient (the caller's agent)")
    kind: str | None
    trigger_id: str | None
    trigger_name: str | None
    fire_id: str | None
    from_agent_id: str | None = Field(description="The agent whose content fired the trigger")
    source: str | None
    source_id: str | None
    similarity: float | None
    message: str | None
    payload: Any = Field(description="The fire as the trigger's actions carry it")
    created_at: dt.datetime
    read_at: dt.datetime | None
    read: bool


async def read_inbox(
    request: Request, who: Caller, *, unread_only: bool, mark_read: bool, limit: int
) -> list[dict[str, Any]]:
    who.require("trigger:read")
    return await layer_of(request).call(
        "agent_inbox", who.identity, unread_only=unread_only, mark_read=mark_read, limit=limit
    )


@router.get(
    "",
    response_model=list[Notification],
    summary="The caller's agent_notify messages, newest first (trigger:read)",
)
async def inbox(
    org_id: str,
    request: Request,
    who: Who,
    unread_only: Annotated[bool, Query(description="Only messages not read yet")] = False,
    limit: Limit = 100,
):
    who.org(org_id)
    return await read_inbox(request, who, unread_only=unread_only, mark_read=False, limit=limit)


@router.post(
    "/read",
    response_model=list[Notification],
    summary="Acknowledge: mark the caller's unread messages read, returning them (trigger:read)",
)
async def acknowledge(org_id: str, request: Request, who: Who, limit: Limit = 100):
    who.org(org_id)
    return await read_inbox(request, who, unread_only=True, mark_read=True, limit=limit)
