"""Who is calling the REST API, and what they may touch.

`caller` (a FastAPI dependency) authenticates `Authorization: ApiKey KEY` (or
`Bearer KEY`) through the server's AccessControl, the same keys as the wire and
MCP. In trust mode (no users, no keys, loopback) the caller is an unrestricted
admin of the configured org. `Caller.org(org_id)` answers 404 for another
organisation's path (never revealing that it exists); `Caller.require(scope)` 403.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from fastapi import Request

from proxy.access.keys import Principal
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

if TYPE_CHECKING:
    from proxy.access.service import AccessControl
    from proxy.agent.layer import AgentLayer


@dataclass(frozen=True)
class Caller:
    org_id: str
    principal: Principal | None  # None: trust mode or a configured user's password
    identity: Identity  # default identity (the bound agent, or the header's / user's)

    @property
    def bound_agent(self) -> str | None:
        """The agent an hd_agent_ key is bound to (it may act only as that agent)."""
        return self.principal.agent_id if self.principal else None

    def require(self, scope: str) -> None:
        self.identity.require(scope)

    def org(self, org_id: str) -> None:
        if org_id != self.org_id:
            raise AgentError.not_found(f"organization {org_id!r} not found")

    def as_agent(self, agent_id: str | None) -> Identity:
        """The identity to act as `agent_id` (the bound agent for agent keys)."""
        if self.principal is not None:
            return self.principal.identity(agent_id)
        if not agent_id:
            return self.identity
        return replace(self.identity, agent_id=agent_id)


def layer_of(request: Request) -> AgentLayer:
    return request.app.state.services.agent


def access_of(request: Request) -> AccessControl:
    return request.app.state.services.access


ADMIN_USER = "hatiproxy-admin"


async def caller(request: Request) -> Caller:
    if getattr(request.app.state, "admin", False):
        # The local admin channel (proxy/api/rest/admin.py): its token was checked before
        # the app; the server superuser, on the organisation its path names.
        config = access_of(request).config
        org = request.path_params.get("org_id") or config.org_id
        return Caller(org, None, Identity(org, config.default_agent, ADMIN_USER))
    host = request.client.host if request.client else None
    headers = {k.lower(): v for k, v in request.headers.items()}
    who, principal = await access_of(request).resolve(headers, host)
    return Caller(who.org_id, principal, who)
