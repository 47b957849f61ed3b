"""REST: semantic triggers under /v1/organizations/{org_id}/triggers (seed 001).

A trigger created with an org-level key (hd_live_) is an organisation trigger
(scope 'org': it watches every agent of the org), owned by the caller's HTTP agent
identity (proxy/access/agent_rule.py: the X-HatiData-Agent-Id header, else the
server's default agent), which receives
agent_notify messages unless action_config.agent_id names another recipient. An agent
key (hd_agent_) creates triggers of scope 'agent' that watch its own agent only (an
org-wide trigger would copy other agents' content into its fire log). Org keys see
and manage every trigger of the org; agent keys only their own (others are 404).

Every change runs through the trigger agent functions as the owning agent (the same
checks as SQL and MCP). `webhook_url` is a shorthand for action_config.url; a webhook
action without one posts to the server's `trigger_webhook_url` (stored on the trigger),
and is 422 when that is not set either.
Re-embedding a concept is synchronous: the answer's status is 'reembedded'.
A path's {trigger_id} is the trigger's id or its name; an org key naming a trigger whose
name several of the org's agents use gets 422 listing their ids.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from proxy.agent.triggers import org as trigger_org
from proxy.api.rest.auth import Caller, caller, layer_of
from proxy.api.rest.errors import ErrorBody
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

router = APIRouter(
    prefix="/v1/organizations/{org_id}/triggers",
    tags=["semantic triggers"],
    responses={
        400: {"model": ErrorBody, "description": "The body is not valid JSON"},
        409: {"model": ErrorBody, "description": "The owner already has a trigger of that name"},
    },
)
# Request bodies take JSON types as they are (no 0 -> false, no 1 -> "1").
STRICT = ConfigDict(strict=True)
Who = Annotated[Caller, Depends(caller)]
# A trigger's id (UUID) or its name (unique per agent).
TriggerRef = Annotated[
    str, Path(min_length=1, max_length=1000, description="The trigger's id (UUID) or its name")
]
Action = Literal["webhook", "agent_notify", "flag_for_review", "write_event"]
EventType = Literal[
    "branch_created", "query_count_exceeded", "storage_exceeded", "idle_timeout", "merge_requested"
]
_THRESHOLD_DOC = (
    "semantic: cosine similarity needed to fire (0..1); branch_lifecycle: the query count, "
    "bytes or idle seconds for query_count_exceeded / storage_exceeded / idle_timeout "
    "(ignored for the other events)"
)

CONFIG_DOC = (
    "Action settings: url, headers, secret (HMAC signing), timeout_secs, max_attempts for "
    "the webhook; agent_id for agent_notify"
)


class TriggerCreate(BaseModel):
    model_config = STRICT
    name: str = Field(min_length=1, max_length=200)
    concept: str | None = Field(
        None,
        min_length=1,
        max_length=4000,
        description="Required for semantic triggers; branch_lifecycle: may name the event type",
    )
    threshold: float = Field(ge=0.0, description=_THRESHOLD_DOC)
    actions: list[Action] = Field(min_length=1)
    cooldown_secs: int | None = Field(
        None, ge=0, le=10**9, description="Default 300 (semantic) or 0 (branch_lifecycle)"
    )
    event_source: Literal["semantic", "branch_lifecycle"] = "semantic"
    event_type: EventType | None = Field(None, description="The branch_lifecycle event")
    enabled: bool = True
    webhook_url: str | None = Field(None, description="Where the webhook action POSTs")
    action_config: dict[str, Any] | None = Field(None, description=CONFIG_DOC)


class TriggerUpdate(BaseModel):
    model_config = STRICT
    name: str | None = Field(None, min_length=1, max_length=200)
    concept: str | None = Field(None, min_length=1, max_length=4000)
    threshold: float | None = Field(None, ge=0.0, description=_THRESHOLD_DOC)
    actions: list[Action] | None = Field(None, min_length=1)
    cooldown_secs: int | None = Field(None, ge=0, le=10**9)
    enabled: bool | None = None
    webhook_url: str | None = None
    action_config: dict[str, Any] | None = Field(None, description=CONFIG_DOC)


class Trigger(BaseModel):
    id: str
    org_id: str
    name: str
    concept: str
    threshold: float
    actions: list[Action]
    cooldown_secs: int
    enabled: bool
    fire_count: int
    created_at: dt.datetime
    embedding_model: str | None
    event_source: str = Field(description="semantic or branch_lifecycle")
    event_type: str | None = Field(description="The branch lifecycle event (concept holds it too)")
    embedding_dimensions: int | None
    agent_id: str = Field(description="The owning agent")
    scope: Literal["agent", "org"]
    action_config: dict[str, Any] = Field(description="Secrets and credential headers shown as ***")
    last_fired_at: dt.datetime | None
    updated_at: dt.datetime


class Deleted(BaseModel):
    trigger_id: str
    status: Literal["deleted"]


class TestBody(BaseModel):
    model_config = STRICT
    text: str = Field(min_length=1, max_length=10 * 1024 * 1024)


class TestResult(BaseModel):
    trigger_id: str
    trigger_name: str
    similarity: float
    would_fire: bool
    model_used: str | None
    model_dimensions: int
    threshold: float


class Fire(BaseModel):
    id: str
    trigger_id: str
    org_id: str
    similarity: float | None
    input_text: str | None
    action_taken: str | None = Field(description="The actions performed, comma-separated")
    fired_at: dt.datetime
    trigger_name: str | None
    agent_id: str = Field(description="The trigger's owner")
    source: str | None = Field(description="'memory', 'reasoning' or 'branch' (lifecycle)")
    source_id: str | None
    source_agent_id: str | None = Field(description="The agent whose content matched")
    status: str = Field(description="done, or pending / delivered / failed with a webhook")
    details: dict[str, Any] | None


class Reembedded(BaseModel):
    trigger_id: str
    status: Literal["reembedded"]
    embedding_model: str | None
    embedding_dimensions: int | None


def _config(body: Any, base: dict[str, Any] | None) -> Any:
    if body.webhook_url is None:
        return body.action_config
    return {**(body.action_config or base or {}), "url": body.webhook_url}


async def _as_owner(who: Caller, request: Request, trigger_id: str) -> tuple[str, Identity]:
    """The trigger id and the identity of its owner (404: unknown, other org / agent; 422: a
    name several of the org's agents use, for an org key)."""
    tid, agent = await trigger_org.owner(layer_of(request), who.org_id, trigger_id, who.bound_agent)
    return tid, who.as_agent(agent)


@router.get("", response_model=list[Trigger], summary="List the org's triggers (trigger:read)")
async def list_triggers(org_id: str, request: Request, who: Who):
    who.org(org_id)
    who.require("trigger:read")
    return await trigger_org.list_triggers(layer_of(request), who.org_id, who.bound_agent)


@router.post("", response_model=Trigger, summary="Register a trigger (trigger:write)")
async def create_trigger(org_id: str, body: TriggerCreate, request: Request, who: Who):
    who.org(org_id)
    who.require("trigger:write")
    return await register(request, who, body)


async def register(request: Request, who: Caller, body: Any) -> dict[str, Any]:
    """register_trigger as the caller: org keys make org-wide triggers, agent keys their own.

    `body`: a TriggerCreate or branch_triggers.LifecycleCreate (the same field names)."""
    identity, scope = who.identity, "agent"
    if who.bound_agent is None:
        scope = "org"
        if identity.scopes is not None:  # an org key with trigger:write may watch the org
            identity = dataclasses.replace(identity, scopes=identity.scopes | {"trigger:org"})
    config = _config(body, None)
    default = layer_of(request).config.trigger_webhook_url
    if "webhook" in body.actions and not (config or {}).get("url") and not default:
        # Checked here too, to name the REST field (the layer names action_config.url).
        raise AgentError.invalid(
            "the webhook action needs a destination: give webhook_url",
            hint="or drop 'webhook' from actions, or set the server's default webhook, "
            "trigger_webhook_url (HATIDATA_TRIGGER_WEBHOOK_URL)",
        )
    rows = await layer_of(request).call(
        "register_trigger",
        identity,
        name=body.name,
        concept=getattr(body, "concept", None),
        threshold=body.threshold,
        actions=list(body.actions),
        action_config=config,
        cooldown_secs=body.cooldown_secs,
        enabled=body.enabled,
        scope=scope,
        event_source=getattr(body, "event_source", "branch_lifecycle"),
        event_type=body.event_type,
    )
    return rows[0]


@router.put("/{trigger_id}", response_model=Trigger, summary="Update a trigger (trigger:write)")
async def update_trigger(
    org_id: str, trigger_id: TriggerRef, body: TriggerUpdate, request: Request, who: Who
):
    who.org(org_id)
    who.require("trigger:write")
    layer = layer_of(request)
    tid, owner = await _as_owner(who, request, trigger_id)
    base = await trigger_org.action_config(layer, tid) if body.webhook_url is not None else None
    rows = await layer.call(
        "update_trigger",
        owner,
        trigger_id=tid,
        name=body.name,
        concept=body.concept,
        threshold=body.threshold,
        actions=None if body.actions is None else list(body.actions),
        action_config=_config(body, base),
        cooldown_secs=body.cooldown_secs,
        enabled=body.enabled,
    )
    return rows[0]


@router.delete("/{trigger_id}", response_model=Deleted, summary="Delete a trigger (trigger:write)")
async def delete_trigger(org_id: str, trigger_id: TriggerRef, request: Request, who: Who):
    who.org(org_id)
    who.require("trigger:write")
    tid, owner = await _as_owner(who, request, trigger_id)
    await layer_of(request).call("delete_trigger", owner, trigger_id=tid)
    return {"trigger_id": tid, "status": "deleted"}


@router.post(
    "/{trigger_id}/test",
    response_model=TestResult,
    summary="Similarity of sample text to the concept; records nothing (trigger:read)",
)
async def test_trigger(
    org_id: str, trigger_id: TriggerRef, body: TestBody, request: Request, who: Who
):
    who.org(org_id)
    who.require("trigger:read")
    tid, owner = await _as_owner(who, request, trigger_id)
    rows = await layer_of(request).call("test_trigger", owner, trigger_id=tid, text=body.text)
    return rows[0]


@router.get(
    "/{trigger_id}/fires",
    response_model=list[Fire],
    summary="A trigger's fire events, newest first (query_audit:read)",
)
async def trigger_fires(
    org_id: str,
    trigger_id: TriggerRef,
    request: Request,
    who: Who,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
):
    who.org(org_id)
    who.require("query_audit:read")
    tid, _ = await _as_owner(who, request, trigger_id)
    return await trigger_org.fires(layer_of(request), who.org_id, tid, limit)


@router.post(
    "/{trigger_id}/re-embed-concept",
    response_model=Reembedded,
    summary="Embed the concept again with the current model, now (trigger:write)",
)
async def reembed_concept(org_id: str, trigger_id: TriggerRef, request: Request, who: Who):
    who.org(org_id)
    who.require("trigger:write")
    tid, owner = await _as_owner(who, request, trigger_id)
    rows = await layer_of(request).call("reembed_trigger", owner, trigger_id=tid)
    return rows[0]
