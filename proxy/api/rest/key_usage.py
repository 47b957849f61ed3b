"""REST: what an API key has been used for (keys:manage), as hatidata-agent's
ControlPlaneClient.get_agent_key_usage / get_agent_key_branch_usage read it.

Counts come from proxy/access/usage.py (kept in memory, flushed in batches; these
answers include what is not flushed yet). The same rules as the other key routes:
another organisation's key, or a key of the other kind under the route, is 404; a key
beyond the caller's own grants is 403.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from proxy.access import keys as k
from proxy.api.rest.auth import Caller, access_of, caller
from proxy.api.rest.keys import managed_key, require_manager

router = APIRouter(prefix="/v1/organizations/{org_id}", tags=["API keys"])
Who = Annotated[Caller, Depends(caller)]


class Requests(BaseModel):
    wire: int = Field(description="Wire logins (connections) with the key")
    rest: int = Field(description="REST requests the key authenticated")
    mcp: int = Field(description="MCP-over-HTTP requests the key authenticated")


class KeyUsage(BaseModel):
    key_id: str
    agent_id: str | None
    agent_name: str | None
    status: str
    total_requests: int
    requests_by_interface: Requests
    total_queries: int = Field(description="SQL statements admitted for the key (wire, MCP)")
    total_credits: float | None = Field(description="Always null: hatiproxy meters no credits")
    first_used_at: dt.datetime | None
    last_used_at: dt.datetime | None
    created_at: dt.datetime


class BranchUsage(BaseModel):
    key_id: str
    agent_id: str | None
    branches_created: int
    branches_merged: int
    branches_discarded: int
    queries_in_branches: int = Field(description="branch_query calls")
    last_used_at: dt.datetime | None


async def _usage(request: Request, who: Caller, org_id: str, key_id: str, agent: bool):
    require_manager(who, org_id)
    key = await managed_key(request, who, key_id, agent_key=agent)
    return key, await access_of(request).usage.usage(key.key_id)


def _key_usage(key: k.ApiKey, u: dict[str, Any]) -> dict[str, Any]:
    requests = {i: u[f"{i}_requests"] for i in ("wire", "rest", "mcp")}
    return {
        "key_id": key.key_id,
        "agent_id": key.agent_id,
        "agent_name": key.agent_id,
        "status": key.status(),
        "total_requests": sum(requests.values()),
        "requests_by_interface": requests,
        "total_queries": u["queries"],
        "total_credits": None,
        "first_used_at": u["first_used_at"],
        "last_used_at": u["last_used_at"] or key.last_used_at,
        "created_at": key.created_at,
    }


@router.get(
    "/agent-keys/{key_id}/usage",
    response_model=KeyUsage,
    summary="Requests by interface, queries and last use of an agent key (keys:manage)",
)
async def agent_key_usage(org_id: str, key_id: str, request: Request, who: Who):
    key, u = await _usage(request, who, org_id, key_id, agent=True)
    return _key_usage(key, u)


@router.get(
    "/agent-keys/{key_id}/branch-usage",
    response_model=BranchUsage,
    summary="Branches an agent key created, merged, discarded and queried (keys:manage)",
)
async def agent_key_branch_usage(org_id: str, key_id: str, request: Request, who: Who):
    key, u = await _usage(request, who, org_id, key_id, agent=True)
    return {
        "key_id": key.key_id,
        "agent_id": key.agent_id,
        "branches_created": u["branches_created"],
        "branches_merged": u["branches_merged"],
        "branches_discarded": u["branches_discarded"],
        "queries_in_branches": u["branch_queries"],
        "last_used_at": u["last_used_at"] or key.last_used_at,
    }


@router.get(
    "/api-keys/{key_id}/usage",
    response_model=KeyUsage,
    summary="Requests by interface, queries and last use of an organisation key (keys:manage)",
)
async def org_key_usage(org_id: str, key_id: str, request: Request, who: Who):
    key, u = await _usage(request, who, org_id, key_id, agent=False)
    return _key_usage(key, u)
