"""REST: branch lifecycle triggers, GET/POST /v1/organizations/{org_id}/triggers/branch-lifecycle.

The same triggers as POST .../triggers with event_source 'branch_lifecycle' (they are
listed, updated, deleted and their fires read under .../triggers too); this form names
the event in `event_type`. Events and thresholds: branch_created and merge_requested
(threshold ignored), query_count_exceeded (queries), storage_exceeded (logical bytes),
idle_timeout (seconds without a query); see proxy.agent.branches.events for when each
fires. Cooldown defaults to 0 here: each branch event is reported once.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from proxy.agent.triggers import org as trigger_org
from proxy.agent.triggers.args import LIFECYCLE
from proxy.api.rest.auth import Caller, caller, layer_of
from proxy.api.rest.errors import ErrorBody
from proxy.api.rest.triggers import CONFIG_DOC, Action, EventType, Trigger, register

router = APIRouter(
    prefix="/v1/organizations/{org_id}/triggers",
    tags=["semantic triggers"],
    responses={
        400: {"model": ErrorBody, "description": "The body is not valid JSON"},
        409: {"model": ErrorBody, "description": "The owner already has a trigger of that name"},
    },
)
Who = Annotated[Caller, Depends(caller)]


class LifecycleCreate(BaseModel):
    model_config = ConfigDict(strict=True)
    name: str = Field(min_length=1, max_length=200)
    event_type: EventType
    actions: list[Action] = Field(min_length=1)
    threshold: float | None = Field(
        None,
        ge=0.0,
        description="Queries / bytes / idle seconds for query_count_exceeded / "
        "storage_exceeded / idle_timeout (required there); ignored otherwise",
    )
    cooldown_secs: int | None = Field(None, ge=0, le=10**9, description="Default 0")
    enabled: bool = True
    webhook_url: str | None = Field(None, description="Where the webhook action POSTs")
    action_config: dict[str, Any] | None = Field(None, description=CONFIG_DOC)


@router.get(
    "/branch-lifecycle",
    response_model=list[Trigger],
    summary="List the org's branch lifecycle triggers (trigger:read)",
)
async def list_lifecycle(org_id: str, request: Request, who: Who):
    who.org(org_id)
    who.require("trigger:read")
    rows = await trigger_org.list_triggers(layer_of(request), who.org_id, who.bound_agent)
    return [r for r in rows if r["event_source"] == LIFECYCLE]


@router.post(
    "/branch-lifecycle",
    response_model=Trigger,
    summary="Register a branch lifecycle trigger (trigger:write)",
)
async def create_lifecycle(org_id: str, body: LifecycleCreate, request: Request, who: Who):
    who.org(org_id)
    who.require("trigger:write")
    return await register(request, who, body)
