"""REST: API keys under /v1/organizations/{org_id} (keys:manage).

`agent-keys` are hd_agent_ keys bound to one agent (hatidata-agent ControlPlaneClient
create/list/get/update/rotate/revoke_agent_key); `api-keys` are hd_live_ organisation
keys. Secrets are shown once (create, rotate) and never listed.

Rules:
- Another organisation's path or key is 404. A key of the other kind under a route
  (an org key under agent-keys) is 404 too.
- No escalation: a caller may create, rotate or revoke only keys whose scopes it holds
  itself, and only an admin key may create or manage an admin key (403). An agent-bound
  caller (hd_agent_ key given keys:manage) manages only its own agent's keys.
- `allowed_schemas` / `allowed_tables` limit the relations the key's SQL may name on
  every interface (proxy/access/table_limits.py; null: unrestricted). A caller with
  limits of its own may grant only keys limited within them (403 otherwise). Updates
  change the key's display `name`, its limits (from its next login or request), and
  the agent's `framework` / `description`; an agent key's agent cannot be renamed
  (422; create a key for the new agent).
- Revoke and rotate drop the server's key cache at once: the old secret gets 401 on
  REST/MCP and 28P01 on the wire with its next request (rotation with
  `grace_period_hours` keeps the old key working until then).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Request
from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field

from proxy.access import keys as k
from proxy.access.scopes import ALIASES, SCOPES, parse_scopes
from proxy.access.table_limits import LimitError, TableLimits
from proxy.api.rest.auth import Caller, access_of, caller, layer_of
from proxy.api.rest.errors import ErrorBody
from proxy.core.errors import AgentError

router = APIRouter(
    prefix="/v1/organizations/{org_id}",
    tags=["API keys"],
    responses={409: {"model": ErrorBody, "description": "The key is revoked or expired"}},
)
Who = Annotated[Caller, Depends(caller)]
Role = Literal["admin", "auditor", "agent", "analyst"]
STRICT = ConfigDict(extra="forbid", strict=True)


def _whole(value: Any) -> Any:
    # JSON Schema counts 3.0 as an integer; strict mode would refuse it ("3" stays refused).
    return int(value) if isinstance(value, float) and value.is_integer() else value


Days = Annotated[int, Field(ge=1, le=3650), BeforeValidator(_whole)]
Hours = Annotated[int, Field(ge=0, le=720), BeforeValidator(_whole)]
Scope = Literal[tuple(SCOPES) + tuple(ALIASES)]  # type: ignore[valid-type]
SCOPES_DOC = "Canonical scopes or their aliases; omitted or empty: the role's scopes"
Names = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=256)]] | None,
    Field(max_length=1000),
]
_SCHEMAS_DOC = "Schemas the key's SQL may use (public = main); null: any"
_TABLES_DOC = "Tables ('table' = public.table, or 'schema.table') the key's SQL may use; null: any"


class _Limits(BaseModel):
    allowed_schemas: Names = Field(None, description=_SCHEMAS_DOC)
    allowed_tables: Names = Field(None, description=_TABLES_DOC)

    def limits(self) -> TableLimits | None:
        try:
            return TableLimits.of(self.allowed_schemas, self.allowed_tables)
        except LimitError as exc:
            raise AgentError.invalid(str(exc)) from None


class AgentKeyCreate(_Limits):
    model_config = STRICT
    agent_name: str = Field(
        min_length=1,
        max_length=256,
        # `agent_id` too: the name responses (and every other route) use for the agent.
        validation_alias=AliasChoices("agent_name", "agent_id"),
        description="The agent the key is for (also accepted as agent_id)",
    )
    framework: str | None = Field(None, max_length=100, description="e.g. langchain, custom")
    description: str | None = Field(None, max_length=1000)
    expires_in_days: Days | None = None
    role: Role = "agent"
    scopes: list[Scope] | None = Field(None, description=SCOPES_DOC)


class AgentKeyUpdate(_Limits):
    model_config = STRICT
    name: str | None = Field(None, min_length=1, max_length=256, description="Display name")
    agent_name: str | None = Field(None, description="Must stay the key's agent")
    framework: str | None = Field(None, max_length=100)
    description: str | None = Field(None, max_length=1000)


class OrgKeyCreate(_Limits):
    model_config = STRICT
    name: str | None = Field(None, min_length=1, max_length=256)
    role: Role = "analyst"
    scopes: list[Scope] | None = Field(None, description=SCOPES_DOC)
    expires_in_days: Days | None = None


class RotateBody(BaseModel):
    model_config = STRICT
    grace_period_hours: Hours = Field(
        0, description="How long the old key keeps working (0: revoked now)"
    )


class KeyInfo(BaseModel):
    id: str
    key_id: str
    org_id: str
    agent_id: str | None
    agent_name: str | None
    name: str
    role: str
    scopes: list[str]
    key_prefix: str
    status: Literal["active", "revoked", "expired"]
    created_at: dt.datetime
    expires_at: dt.datetime | None
    revoked_at: dt.datetime | None
    last_used_at: dt.datetime | None
    rotated_to: str | None
    framework: str | None = None
    description: str | None = None
    allowed_schemas: list[str] | None = None
    allowed_tables: list[str] | None = None


class KeyCreated(KeyInfo):
    raw_key: str = Field(description="The secret: shown only in this response")


class Rotated(BaseModel):
    old_key_id: str
    new_key_id: str
    new_key: str = Field(description="The new secret: shown only in this response")
    key_prefix: str
    grace_period_hours: int
    old_key_status: Literal["active", "revoked", "expired"]
    old_key_expires_at: dt.datetime | None


class Revoked(BaseModel):
    key_id: str
    revoked: Literal[True]
    revoked_at: dt.datetime | None


# -- helpers ----------------------------------------------------------------------------


def require_manager(who: Caller, org_id: str) -> None:
    who.org(org_id)
    who.require("keys:manage")


def _may_grant(
    who: Caller,
    role: str,
    scopes: frozenset[str],
    agent_id: str | None,
    limits: TableLimits | None = None,
) -> None:
    """403 unless the caller holds everything the key would (see the module doc)."""
    p = who.principal
    if p is None:  # trust mode or a configured user: unrestricted
        return
    if p.limits is not None and not p.limits.covers(limits):
        raise AgentError.forbidden(
            "this key is limited to some schemas / tables and can grant only keys limited "
            "within them"
        )
    if role == "admin" and p.role != "admin":
        raise AgentError.forbidden("only an admin key may create or manage an admin key")
    missing = sorted(scopes - p.scopes)
    if missing:
        raise AgentError.forbidden(f"this key cannot grant scopes it lacks: {', '.join(missing)}")
    if p.agent_id is not None and agent_id != p.agent_id:
        raise AgentError.forbidden(f"this key manages only keys of agent {p.agent_id!r}")


def _sorted(names: Any) -> list[str] | None:
    return None if names is None else sorted(names)


def _scopes(names: list[str] | None, role: str) -> frozenset[str]:
    try:
        return parse_scopes(names, role)
    except ValueError as exc:
        raise AgentError.invalid(str(exc)) from None


def _expiry(days: int | None) -> dt.datetime | None:
    return None if days is None else dt.datetime.now(dt.UTC) + dt.timedelta(days=days)


async def _agents(request: Request, org_id: str) -> dict[str, tuple[str | None, str | None]]:
    """agent_id -> (framework, description) of the org's agents."""
    rows = await layer_of(request).db.run(
        lambda cur: cur.execute(
            f"SELECT agent_id, framework, description FROM {k.T_AGENTS} WHERE org_id = ?",
            [org_id],
        ).fetchall()
    )
    return {a: (f, d) for a, f, d in rows}


def _info(key: k.ApiKey, agents: dict[str, tuple[str | None, str | None]]) -> dict[str, Any]:
    framework, description = agents.get(key.agent_id or "", (None, None))
    return {**key.as_dict(), "framework": framework, "description": description}


async def managed_key(request: Request, who: Caller, key_id: str, agent_key: bool) -> k.ApiKey:
    """The org's key of the route's kind (404 otherwise); 403 if beyond the caller."""
    key = await access_of(request).get_key(key_id, who.org_id)
    if (key.agent_id is not None) != agent_key:
        raise AgentError.not_found(f"API key {key_id!r} not found")
    _may_grant(who, key.role, key.scopes, key.agent_id, key.limits)
    return key


async def _rotate(request: Request, who: Caller, key: k.ApiKey, body: RotateBody | None):
    hours = body.grace_period_hours if body else 0
    new, secret, old = await access_of(request).rotate_key(
        key.key_id, who.org_id, dt.timedelta(hours=hours)
    )
    return {
        "old_key_id": old.key_id,
        "new_key_id": new.key_id,
        "new_key": secret,
        "key_prefix": new.key_prefix,
        "grace_period_hours": hours,
        "old_key_status": old.status(),
        "old_key_expires_at": old.expires_at,
    }


async def _revoke(request: Request, who: Caller, key: k.ApiKey):
    done = await access_of(request).revoke_key(key.key_id, who.org_id)
    return {"key_id": done.key_id, "revoked": True, "revoked_at": done.revoked_at}


RotateIn = Annotated[RotateBody | None, Body()]

# -- agent keys -------------------------------------------------------------------------


@router.post(
    "/agent-keys",
    status_code=201,
    response_model=KeyCreated,
    summary="Create an hd_agent_ key bound to one agent; raw_key is shown once (keys:manage)",
)
async def create_agent_key(org_id: str, body: AgentKeyCreate, request: Request, who: Who):
    require_manager(who, org_id)
    scopes = _scopes(body.scopes, body.role)
    _may_grant(who, body.role, scopes, body.agent_name, body.limits())
    key, secret = await access_of(request).create_key(
        who.org_id,
        role=body.role,
        agent_id=body.agent_name,
        name=body.agent_name,
        scopes=sorted(scopes),
        expires_at=_expiry(body.expires_in_days),
        framework=body.framework,
        description=body.description,
        allowed_schemas=body.allowed_schemas,
        allowed_tables=body.allowed_tables,
    )
    await _set_agent(request, who.org_id, body.agent_name, body.framework, body.description)
    return {**_info(key, await _agents(request, who.org_id)), "raw_key": secret}


async def _set_agent(
    request: Request, org_id: str, agent: str, framework: str | None, description: str | None
) -> None:
    """Record framework / description for an agent that already existed (None: keep)."""
    sets = [(c, v) for c, v in (("framework", framework), ("description", description)) if v]
    if not sets:
        return
    sql = ", ".join(f"{c} = ?" for c, _ in sets)
    await layer_of(request).db.transaction(
        lambda cur: cur.execute(
            f"UPDATE {k.T_AGENTS} SET {sql} WHERE org_id = ? AND agent_id = ?",
            [*(v for _, v in sets), org_id, agent],
        )
    )
    await access_of(request).published([], org_id, agent)  # to the lake's other proxies


@router.get(
    "/agent-keys",
    response_model=list[KeyInfo],
    summary="The org's agent keys, oldest first, never their secrets (keys:manage)",
)
async def list_agent_keys(org_id: str, request: Request, who: Who):
    require_manager(who, org_id)
    keys = await access_of(request).list_keys(who.org_id)
    agents = await _agents(request, who.org_id)
    bound = who.bound_agent
    return [
        _info(key, agents)
        for key in keys
        if key.agent_id is not None and bound in (None, key.agent_id)
    ]


@router.get("/agent-keys/{key_id}", response_model=KeyInfo, summary="One agent key (keys:manage)")
async def get_agent_key(org_id: str, key_id: str, request: Request, who: Who):
    require_manager(who, org_id)
    key = await managed_key(request, who, key_id, agent_key=True)
    return _info(key, await _agents(request, who.org_id))


@router.put(
    "/agent-keys/{key_id}",
    response_model=KeyInfo,
    summary="Change an agent key's name, framework or description (keys:manage)",
)
async def update_agent_key(
    org_id: str, key_id: str, body: AgentKeyUpdate, request: Request, who: Who
):
    require_manager(who, org_id)
    key = await managed_key(request, who, key_id, agent_key=True)
    if body.agent_name is not None and body.agent_name != key.agent_id:
        raise AgentError.invalid(
            "an agent key's agent cannot be changed; create a key for the new agent"
        )
    if body.name is not None:
        await layer_of(request).db.transaction(
            lambda cur: cur.execute(
                f"UPDATE {k.T_KEYS} SET name = ? WHERE key_id = ?", [body.name, key.key_id]
            )
        )
        await access_of(request).published([key.key_id], key.org_id)
    given = body.model_fields_set & {"allowed_schemas", "allowed_tables"}
    if given:  # a field left out keeps its value; null lifts that part of the limit
        schemas = body.allowed_schemas if "allowed_schemas" in given else key.allowed_schemas
        tables = body.allowed_tables if "allowed_tables" in given else key.allowed_tables
        new = _Limits(allowed_schemas=_sorted(schemas), allowed_tables=_sorted(tables))
        _may_grant(who, key.role, key.scopes, key.agent_id, new.limits())
        await access_of(request).set_limits(key.key_id, new.allowed_schemas, new.allowed_tables)
    await _set_agent(request, who.org_id, key.agent_id or "", body.framework, body.description)
    fresh = await access_of(request).get_key(key.key_id, who.org_id)
    return _info(fresh, await _agents(request, who.org_id))


@router.post(
    "/agent-keys/{key_id}/rotate",
    response_model=Rotated,
    summary="A new secret for an agent key; the old one stops now or after a grace period "
    "(keys:manage)",
)
async def rotate_agent_key(
    org_id: str, key_id: str, request: Request, who: Who, body: RotateIn = None
):
    require_manager(who, org_id)
    return await _rotate(request, who, await managed_key(request, who, key_id, True), body)


@router.delete(
    "/agent-keys/{key_id}",
    response_model=Revoked,
    summary="Revoke an agent key at once (keys:manage)",
)
async def revoke_agent_key(org_id: str, key_id: str, request: Request, who: Who):
    require_manager(who, org_id)
    return await _revoke(request, who, await managed_key(request, who, key_id, True))


# -- organisation keys ------------------------------------------------------------------


@router.post(
    "/api-keys",
    status_code=201,
    response_model=KeyCreated,
    summary="Create an hd_live_ organisation key with a role and scopes (keys:manage)",
)
async def create_org_key(org_id: str, body: OrgKeyCreate, request: Request, who: Who):
    require_manager(who, org_id)
    scopes = _scopes(body.scopes, body.role)
    _may_grant(who, body.role, scopes, None, body.limits())
    key, secret = await access_of(request).create_key(
        who.org_id,
        role=body.role,
        name=body.name or body.role,
        scopes=sorted(scopes),
        expires_at=_expiry(body.expires_in_days),
        allowed_schemas=body.allowed_schemas,
        allowed_tables=body.allowed_tables,
    )
    return {**_info(key, {}), "raw_key": secret}


@router.get(
    "/api-keys",
    response_model=list[KeyInfo],
    summary="The org's organisation keys, never their secrets (keys:manage)",
)
async def list_org_keys(org_id: str, request: Request, who: Who):
    require_manager(who, org_id)
    if who.bound_agent is not None:
        return []  # an agent-bound caller manages no organisation keys
    return [
        _info(key, {}) for key in await access_of(request).list_keys(who.org_id) if not key.agent_id
    ]


@router.delete(
    "/api-keys/{key_id}", response_model=Revoked, summary="Revoke an organisation key (keys:manage)"
)
async def revoke_org_key(org_id: str, key_id: str, request: Request, who: Who):
    require_manager(who, org_id)
    return await _revoke(request, who, await managed_key(request, who, key_id, False))


@router.post(
    "/api-keys/{key_id}/rotate",
    response_model=Rotated,
    summary="A new secret for an organisation key (keys:manage)",
)
async def rotate_org_key(
    org_id: str, key_id: str, request: Request, who: Who, body: RotateIn = None
):
    require_manager(who, org_id)
    return await _rotate(request, who, await managed_key(request, who, key_id, False), body)
