"""The official `mcp` package's low-level Server, wired to the 25 tools.

Both transports use it: stdio (`proxy.api.mcp.stdio`, `hatiproxy mcp`) and streamable
HTTP (`proxy.api.mcp.http`, inside the server). The package runs the protocol
(initialize, tools/list, tools/call, ping, notifications, error envelopes); our two
handlers only list the tools and hand calls to `mcp_tools.run_tool`, which validates
arguments against the generated schemas itself (the package does not) and turns every
failure into an error result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from proxy import __version__
from proxy.api.mcp.tools import Target, run_tool, tool_definitions

INSTRUCTIONS = (
    "hatiproxy: a Postgres-compatible SQL engine (DuckDB) with agent memory, agent state, "
    "a hash-chained reasoning ledger, semantic triggers and data branches. Memories, state "
    "and traces are private to the calling agent."
)


def build_server(target_for: Callable[[Any], Target]) -> Server:
    """target_for(ctx) -> the Target a call runs on (stdio: one; HTTP: per caller)."""
    tools = [types.Tool.model_validate(d) for d in tool_definitions()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await run_tool(target_for(ctx), params.name, params.arguments)
        return types.CallToolResult.model_validate(result)

    return Server(
        "hatiproxy",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
