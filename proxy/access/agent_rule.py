"""Who is the agent: one rule for SQL over the wire, MCP (stdio and HTTP) and REST.

1. An agent key (hd_agent_) is its agent. Naming another agent is refused.
2. Otherwise (an organisation key, trust mode, a configured user's password) the caller
   is the agent it names: `hatidata_agent_id` over the wire (startup parameter or
   `options=-c hatidata_agent_id=...`; `hatiproxy mcp --agent-id` sends it), the
   `X-HatiData-Agent-Id` header over HTTP (MCP and REST), `agent_id` in a REST body or
   query where the route takes one.
3. Naming none, a configured user (password login) is the agent of its user name.
4. Anyone else is the server's `default_agent` (default `default`), on every interface,
   so memories stored keyless over psql are found keyless over MCP and REST.

The organisation is the key's, else the server's `org_id`.
"""

from __future__ import annotations

from proxy.access.keys import Principal
from proxy.core.config import Config
from proxy.core.identity import Identity

AGENT_HEADER = "x-hatidata-agent-id"  # HTTP header names arrive lower-cased
AGENT_SETTING = "hatidata_agent_id"  # wire startup parameter / -c option


def named(value: str | None) -> str | None:
    """An agent name as a caller gave it; blank means none."""
    value = (value or "").strip()
    return value or None


def identity(
    config: Config,
    principal: Principal | None,
    agent: str | None,
    user: str = "",
    password_user: bool = False,
) -> Identity:
    """The identity of a caller by the rule above (AgentError 403 for an agent key that
    names another agent). `agent` is the name the caller gave, if any; `password_user`
    says the caller logged in with a configured user's password as `user`."""
    agent = named(agent)
    if principal is not None:
        if principal.agent_id is not None:
            return principal.identity(agent, user)
        return principal.identity(agent or config.default_agent, user)
    chosen = agent or (user if password_user and user else config.default_agent)
    return Identity(config.org_id, chosen, user)
