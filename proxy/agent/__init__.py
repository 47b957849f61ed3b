"""The agent-native layer: memory, state, chain-of-thought ledger, triggers, branches.

One implementation (`proxy.agent.layer.AgentLayer` and the functions in
`proxy.core.registry.REGISTRY`), reached over SQL (`proxy.execution.sql_bridge`), MCP
(`proxy.api.mcp`) and REST (`proxy.api.rest`). Each service package registers its
functions when it is imported (its `__init__`).
"""
