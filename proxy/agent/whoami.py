"""`whoami()`: who this caller is to the agent layer, on every interface.

The agent a caller acts as is decided per interface by proxy/access/agent_rule.py; this
says what it decided (SQL, MCP and REST alike), so memories that seem to vanish between
interfaces can be traced to two different agents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.access.ownership import login_name
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, agent_function

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext


@agent_function(
    "whoami",
    params=[],
    columns=[
        ("org_id", "VARCHAR"),
        ("agent_id", "VARCHAR"),
        ("login", "VARCHAR"),
        ("role", "VARCHAR"),
        ("key_id", "VARCHAR"),
        ("superuser", "BOOLEAN"),
    ],
    scope="",  # anyone may ask who they are
    mcp=McpTool((), "The organisation and agent this caller acts as, and its login and role."),
)
async def whoami(layer: AgentContext, who: Identity) -> list[dict[str, Any]]:
    """The caller's organisation, agent, login (who owns what it creates), key role and
    key id (NULL without a key), and whether it is a server superuser."""
    return [
        {
            "org_id": who.org_id,
            "agent_id": who.agent_id,
            "login": login_name(who.login),
            "role": who.role,
            "key_id": who.key_id,
            "superuser": who.superuser,
        }
    ]
