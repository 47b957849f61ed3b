"""The agent-native layer: memory, state, chain-of-thought ledger, triggers, branches.

One implementation (`AgentLayer` and the functions in `base.REGISTRY`), reached over
SQL (`proxy.execution.sql_bridge`), MCP (`proxy.mcp`) and REST.
"""

from proxy.agent.layer import AgentLayer
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import REGISTRY

__all__ = ["REGISTRY", "AgentError", "AgentLayer", "Identity"]
