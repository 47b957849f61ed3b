"""The agent-native layer: memory, state, chain-of-thought ledger, triggers, branches.

One implementation (`AgentLayer` and the functions in `base.REGISTRY`), reached over
SQL (`proxy.agent.sql_bridge`), MCP (`proxy.mcp`) and REST.
"""

from proxy.agent.base import REGISTRY, AgentError, Identity
from proxy.agent.layer import AgentLayer

__all__ = ["REGISTRY", "AgentError", "AgentLayer", "Identity"]
