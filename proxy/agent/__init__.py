"""The agent-native layer: memory, state, chain-of-thought ledger, triggers, branches.

One implementation (`proxy.agent.layer.AgentLayer` and the functions in
`proxy.core.registry.REGISTRY`), reached over SQL (`proxy.execution.sql_bridge`), MCP
(`proxy.api.mcp`) and REST (`proxy.api.rest`). Each service package registers its
functions when it is imported (its `__init__`).
"""

from proxy.core.registry import REGISTRY
from proxy.core.relations import RELATIONS
from transpiler.agent_calls import set_agent_functions, set_agent_relations

# The transpiler lifts exactly the declared agent calls out of FROM. It cannot look names
# up in the registry (it imports nothing of proxy), so the registry tells it; every agent
# function is declared under this package, so this runs before the first one registers.
REGISTRY.watch(set_agent_functions)
# Likewise the `_hatidata_*` relations (proxy/core/relations.py) each service declares.
RELATIONS.watch(set_agent_relations)
