"""REST: branches under /v1/organizations/{org_id}/branches (the SDK's ControlPlaneClient).

Create, merge and discard run through the branch agent functions (branch_create,
branch_merge, branch_discard) acting as the owning agent, so SQL, MCP and REST share
one behaviour (including the merge-approval rule: a branch whose latest decision is
reject answers 409 merge_rejected). Reads and figures come from proxy.agent.branches.org.
An org-level key (hd_live_) sees and manages every branch of its org; an agent key
(hd_agent_) only its own agent's (others are 404, never revealed).

Decisions:
- `tables` on create are copied into the branch at once (a snapshot of main taken now);
  every other table of main stays visible through the branch and is copied on its first
  write. An unknown table is 422.
- Branch ids are 32 hex digits (`id`); the UUID form is accepted in paths too, and so is
  the branch's name (it picks the name's one active branch, or its only one; a name that
  fits several branches of the caller's scope is 422 listing their ids). An unknown or
  foreign one is 404. A branch named "analytics" is reached by id for GET: that path is
  the org's figures.
- diff / conflicts compare against the fingerprint of main kept when each table was
  copied (proxy.agent.branches.stats): rows are matched by primary key, so tables without
  one have null `changed` counts and no per-key conflicts. Both need an active branch
  (409 otherwise: a merged or discarded branch's tables are gone).
- cost: storage is logical bytes (values at their width, text at its byte length), not
  disk blocks; `estimated_cost_usd` is always null: hatiproxy runs on your machine and
  has no price list.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from proxy.agent.branches import org as branch_org
from proxy.agent.branches.service import MAX_TTL_SECONDS
from proxy.api.rest.auth import Caller, caller, layer_of
from proxy.api.rest.errors import ErrorBody

router = APIRouter(
    prefix="/v1/organizations/{org_id}/branches",
    tags=["branches"],
    responses={
        400: {"model": ErrorBody, "description": "The body is not valid JSON"},
        409: {
            "model": ErrorBody,
            "description": "The branch is not active, or its merge "
            "was rejected (merge_rejected), or the merge failed a constraint",
        },
    },  # fmt: skip
)
STRICT = ConfigDict(strict=True)
Who = Annotated[Caller, Depends(caller)]
# The branch's id (32 hex digits, or the same as a UUID) or its name.
BranchId = Annotated[
    str,
    Path(
        min_length=1,
        max_length=1000,
        description="The branch's id (32 hex digits, or UUID form) or its name",
    ),
]
Status = Literal[
    "active", "merged", "discarded", "expired"
]  # proxy.agent.branches.service.STATUSES


class BranchCreate(BaseModel):
    model_config = STRICT
    agent_id: str | None = Field(
        None, min_length=1, max_length=1000, description="The owning agent (agent keys: their own)"
    )
    tables: list[Annotated[str, Field(min_length=1, max_length=1000)]] = Field(
        default_factory=list, max_length=1000, description="Tables of main to copy now"
    )
    description: str | None = Field(None, max_length=10_000)
    name: str | None = Field(None, max_length=200, description="Default: branch-<id prefix>")
    ttl_seconds: int = Field(3600, ge=1, le=MAX_TTL_SECONDS, description="Expires after this")


class Approval(BaseModel):
    decision: Literal["approve", "reject"]
    decided_by: str | None
    decided_at: dt.datetime | None
    reason: str | None
    session_id: str | None = Field(description="The reasoning session it was decided in")


class CopiedTable(BaseModel):
    table: str
    kept: str | None = Field(description="Which constraints the copy kept")
    copied_at: str | None


class Branch(BaseModel):
    id: str
    branch_id: str
    org_id: str
    agent_id: str
    name: str
    description: str | None
    schema_name: str = Field(description="SET search_path = '<schema_name>,main' on the wire")
    status: Status
    created_at: dt.datetime
    expires_at: dt.datetime
    merged_at: dt.datetime | None
    ended_at: dt.datetime | None
    strategy: str | None
    tables: list[str] = Field(description="main's tables when the branch was created")
    tables_copied: list[CopiedTable]
    query_count: int
    last_activity_at: dt.datetime
    approval: Approval | None = Field(description="The latest merge decision")
    merge_report: list[dict[str, Any]] | None


class AuditEntry(BaseModel):
    event: str = Field(description="created, approved, rejected, merge_refused, merged, ...")
    actor: str | None
    details: dict[str, Any]
    created_at: dt.datetime


class BranchDetail(Branch):
    audit: list[AuditEntry]


class MergeBody(BaseModel):
    model_config = STRICT
    strategy: Literal["branch_wins", "main_wins"] = "branch_wins"


class Merged(BaseModel):
    id: str
    branch_id: str
    status: Literal["merged"]
    strategy: str
    merged_at: dt.datetime
    tables: list[dict[str, Any]] = Field(description="Per table: action and row counts")


class Discarded(BaseModel):
    id: str
    branch_id: str
    status: Literal["discarded"]
    discarded_at: dt.datetime


class Changes(BaseModel):
    added: int
    removed: int
    changed: int | None = Field(description="null without a primary key")


class TableDiff(BaseModel):
    table: str
    origin: Literal["copied", "created"]
    key: list[str] | None
    rows_in_branch: int
    rows_in_main: int | None
    branch: Changes | None = Field(description="Changes made in the branch since the copy")
    main: Changes | None = Field(description="Changes made in main since the copy")
    note: str | None


class Diff(BaseModel):
    branch_id: str
    status: Status
    tables: list[TableDiff]
    unchanged_tables: list[str] = Field(description="Never written: they show main's rows")
    rows_added: int
    rows_removed: int
    rows_changed: int


class Conflict(BaseModel):
    key: dict[str, Any]
    kind: str = Field(description="changed_on_both_sides, inserted_on_both_sides, ...")


class TableConflicts(BaseModel):
    table: str
    key: list[str] | None
    conflict_count: int | None = Field(description="null when rows cannot be matched")
    conflicts: list[Conflict] = Field(description="At most 100 keys")
    truncated: bool
    note: str | None


class Conflicts(BaseModel):
    branch_id: str
    has_conflicts: bool
    conflict_count: int
    tables: list[TableConflicts]


class Cost(BaseModel):
    branch_id: str
    status: Status
    tables: int = Field(description="Tables the branch holds (copies and created)")
    tables_copied: int
    rows: int
    data_bytes: int = Field(description="Logical bytes of the branch's tables")
    snapshot_bytes: int = Field(description="Fingerprints of main kept for diff / conflicts")
    storage_bytes: int
    query_count: int
    query_time_ms: float
    created_at: dt.datetime
    last_activity_at: dt.datetime
    age_seconds: float | None
    idle_seconds: float | None
    expires_at: dt.datetime
    ttl_remaining_seconds: float | None
    estimated_cost_usd: float | None = Field(description="Always null: no price list here")


class StatusCounts(BaseModel):
    active: int
    merged: int
    discarded: int
    expired: int


class Decisions(BaseModel):
    approve: int
    reject: int


class Analytics(BaseModel):
    org_id: str
    agent_id: str | None = Field(description="Set for agent keys: their own branches only")
    total: int
    by_status: StatusCounts
    agents: int
    query_count: int
    query_time_ms: float
    merge_rate: float | None = Field(description="merged / ended branches; null if none ended")
    avg_lifetime_seconds: float | None
    latest_decisions: Decisions
    merges_refused: int
    active_rows: int
    active_storage_bytes: int


async def _owned(who: Caller, request: Request, branch_id: str) -> tuple[str, Any]:
    """(branch id, owner identity) of a branch of the caller's org (404 otherwise)."""
    bid, agent = await branch_org.owner(layer_of(request), who.org_id, branch_id, who.bound_agent)
    return bid, who.as_agent(agent)


@router.post("", response_model=Branch, summary="Create a branch (branch:create)")
async def create_branch(org_id: str, body: BranchCreate, request: Request, who: Who):
    who.org(org_id)
    who.require("branch:create")
    layer = layer_of(request)
    rows = await layer.call(
        "branch_create",
        who.as_agent(body.agent_id),
        name=body.name,
        description=body.description,
        ttl_seconds=body.ttl_seconds,
        tables=body.tables,
    )
    return await branch_org.get(layer, who.org_id, rows[0]["branch_id"])


@router.get("", response_model=list[Branch], summary="List the org's branches (branch:read)")
async def list_branches(org_id: str, request: Request, who: Who, status: Status | None = None):
    who.org(org_id)
    who.require("branch:read")
    return await branch_org.list_branches(layer_of(request), who.org_id, who.bound_agent, status)


# Before /{branch_id}: "analytics" is not a branch id.
@router.get(
    "/analytics", response_model=Analytics, summary="Branch figures of the org (branch:read)"
)
async def analytics(org_id: str, request: Request, who: Who):
    who.org(org_id)
    who.require("branch:read")
    return await branch_org.analytics(layer_of(request), who.org_id, who.bound_agent)


@router.get(
    "/{branch_id}",
    response_model=BranchDetail,
    summary="A branch and its audit trail (branch:read)",
)
async def get_branch(org_id: str, branch_id: BranchId, request: Request, who: Who):
    who.org(org_id)
    who.require("branch:read")
    bid, _ = await _owned(who, request, branch_id)
    return await branch_org.get(layer_of(request), who.org_id, bid)


@router.post(
    "/{branch_id}/merge",
    response_model=Merged,
    summary="Merge a branch into main and drop it (branch:merge)",
)
async def merge_branch(
    org_id: str, branch_id: BranchId, request: Request, who: Who, body: MergeBody | None = None
):
    who.org(org_id)
    who.require("branch:merge")
    bid, owner = await _owned(who, request, branch_id)
    strategy = (body or MergeBody()).strategy
    rows = await layer_of(request).call("branch_merge", owner, branch_id=bid, strategy=strategy)
    return {**rows[0], "id": bid}


@router.delete(
    "/{branch_id}", response_model=Discarded, summary="Discard a branch (branch:discard)"
)
async def discard_branch(org_id: str, branch_id: BranchId, request: Request, who: Who):
    who.org(org_id)
    who.require("branch:discard")
    bid, owner = await _owned(who, request, branch_id)
    rows = await layer_of(request).call("branch_discard", owner, branch_id=bid)
    return {**rows[0], "id": bid}


async def _read_owned(
    who: Caller, request: Request, org_id: str, branch_id: str, read: Callable[..., Awaitable[Any]]
) -> Any:
    """A branch:read figure of one branch the caller may see (404 otherwise)."""
    who.org(org_id)
    who.require("branch:read")
    bid, _ = await _owned(who, request, branch_id)
    return await read(layer_of(request), who.org_id, bid)


@router.get(
    "/{branch_id}/diff",
    response_model=Diff,
    summary="Rows changed per table, in the branch and in main (branch:read)",
)
async def branch_diff(org_id: str, branch_id: BranchId, request: Request, who: Who):
    return await _read_owned(who, request, org_id, branch_id, branch_org.diff)


@router.get(
    "/{branch_id}/conflicts",
    response_model=Conflicts,
    summary="Keys changed both in the branch and in main since the copy (branch:read)",
)
async def branch_conflicts(org_id: str, branch_id: BranchId, request: Request, who: Who):
    return await _read_owned(who, request, org_id, branch_id, branch_org.conflicts)


@router.get(
    "/{branch_id}/cost",
    response_model=Cost,
    summary="Rows, bytes and queries of a branch (branch:read)",
)
async def branch_cost(org_id: str, branch_id: BranchId, request: Request, who: Who):
    return await _read_owned(who, request, org_id, branch_id, branch_org.cost)
