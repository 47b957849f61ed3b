"""`hatiproxy mcp`: MCP over stdio, talking to a running hatiproxy over the wire.

The same flags as the public `hatidata-mcp-server` (--host --port --agent-id
--database --user --password / HATIDATA_API_KEY), so existing MCP client configs only
change the command. Transport: the `mcp` package's `stdio_server` (one JSON-RPC
message per line) and its low-level Server. One gap is filled here: the package
drops a line that is not valid JSON-RPC without answering; JSON-RPC says the sender
gets a parse error (-32700) or invalid request (-32600), so a relay between the
transport and the Server answers those lines itself.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from typing import Any

import anyio

log = logging.getLogger("hatiproxy.mcp")


def add_mcp_command(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve MCP over stdio, backed by a running hatiproxy",
        description="MCP server over stdio (23 tools) for a running hatiproxy server.",
    )
    p.add_argument("--host", default="localhost", help="hatiproxy host (default: localhost)")
    p.add_argument("--port", type=int, default=5439, help="hatiproxy port (default: 5439)")
    p.add_argument("--agent-id", default="mcp-agent", help="agent identity (default: mcp-agent)")
    p.add_argument("--database", default="hatidata", help="database name (default: hatidata)")
    p.add_argument("--user", default="agent", help="user name (default: agent)")
    p.add_argument(
        "--password", default="", help="password / API key (default: $HATIDATA_API_KEY or none)"
    )
    p.add_argument("--log-level", default="WARNING", help="stderr log level (default: WARNING)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from proxy.api.mcp.targets import WireTarget

    logging.basicConfig(  # stdout carries JSON-RPC: logs go to stderr
        stream=sys.stderr,
        level=str(args.log_level).upper(),
        format="[hatiproxy-mcp] %(levelname)s %(message)s",
    )
    target = WireTarget(
        host=args.host,
        port=args.port,
        database=args.database,
        user=args.user,
        password=args.password or os.environ.get("HATIDATA_API_KEY", ""),
        agent_id=args.agent_id,
    )
    log.info("serving MCP on stdio for %s:%s as agent %s", args.host, args.port, args.agent_id)
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve_stdio, target)
    return 0


async def serve_stdio(target: Any) -> None:
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    from proxy.api.mcp.server import build_server

    server = build_server(lambda ctx: target)
    try:
        await target.connect()  # fail early in the log; calls reconnect later anyway
    except Exception as exc:
        log.warning("cannot reach hatiproxy yet (%s); tool calls will retry", exc)
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            async with send:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        await send.send(item)
                        continue
                    bad_json = isinstance(item, ValidationError) and any(
                        e["type"] == "json_invalid" for e in item.errors()
                    )
                    error = types.JSONRPCError(
                        jsonrpc="2.0",
                        id=None,
                        error=types.ErrorData(
                            code=types.PARSE_ERROR if bad_json else types.INVALID_REQUEST,
                            message="Parse error: not valid JSON"
                            if bad_json
                            else "Invalid Request: not a JSON-RPC 2.0 message",
                        ),
                    )
                    await write_stream.send(SessionMessage(error))

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            await server.run(receive, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()
    close = getattr(target, "close", None)
    if close is not None:
        await close()
