"""`hatiproxy mcp`: MCP over stdio, talking to a running hatiproxy over the wire.

The same flags as the public `hatidata-mcp-server` (--host --port --agent-id
--database --user --password / HATIDATA_API_KEY), so existing MCP client configs only
change the command; `--api-key` is another name for `--password`, and `--config FILE`
reads the same settings from a TOML file (`api_key = "hd_..."`), since MCP clients
often start the command without the caller's environment. Order: defaults < file <
HATIDATA_API_KEY < flags.

The key is tried once before serving: when the server refuses the login (a wrong or
missing key), `initialize` is answered with that error, so the MCP client shows it,
instead of every later tool call failing. A server that cannot be reached yet is only
logged: calls connect again. Transport: the `mcp` package's `stdio_server` (one JSON-RPC
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
        description="MCP server over stdio (25 tools) for a running hatiproxy server.",
    )
    p.add_argument("--host", help="hatiproxy host (default: localhost)")
    p.add_argument("--port", type=int, help="hatiproxy port (default: 5439)")
    p.add_argument(
        "--agent-id",
        help="agent identity (default: the API key's agent, else the server's default_agent)",
    )
    p.add_argument("--database", help="database name (default: hatidata)")
    p.add_argument("--user", help="user name (default: agent)")
    p.add_argument(
        "--password",
        "--api-key",
        dest="api_key",
        help="API key or password (default: $HATIDATA_API_KEY, or api_key in --config)",
    )
    p.add_argument(
        "--config",
        help="TOML file with any of: " + ", ".join(MCP_SETTINGS) + " (flags win over it)",
    )
    p.add_argument("--log-level", help="stderr log level (default: WARNING)")
    p.set_defaults(func=run)


# `hatiproxy mcp` settings and their defaults (`password` is read as `api_key`).
MCP_SETTINGS: dict[str, Any] = {
    "host": "localhost",
    "port": 5439,
    "agent_id": "",
    "database": "hatidata",
    "user": "agent",
    "api_key": "",
    "log_level": "WARNING",
}


def mcp_settings(args: argparse.Namespace, environ: Any = None) -> dict[str, Any]:
    """defaults < --config file < HATIDATA_API_KEY < flags."""
    import tomllib

    env = os.environ if environ is None else environ
    values = dict(MCP_SETTINGS)
    path = getattr(args, "config", None)
    if path:
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except OSError as exc:
            raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path} is not valid TOML: {exc}") from None
        if "password" in data:
            data.setdefault("api_key", data.pop("password"))
        data = {k.replace("-", "_"): v for k, v in data.items()}
        unknown = sorted(set(data) - set(MCP_SETTINGS))
        if unknown:
            raise ValueError(
                f"unknown settings in {path}: {', '.join(unknown)} "
                f"(known: {', '.join(MCP_SETTINGS)})"
            )
        for name, value in data.items():
            want = type(MCP_SETTINGS[name])
            if not isinstance(value, want) or isinstance(value, bool):
                raise ValueError(f"{path}: {name} must be {want.__name__}, not {value!r}")
        values.update(data)
    if env.get("HATIDATA_API_KEY"):
        values["api_key"] = env["HATIDATA_API_KEY"]
    for name in MCP_SETTINGS:
        given = getattr(args, name, None)
        if given is not None:
            values[name] = given
    return values


def run(args: argparse.Namespace) -> int:
    from proxy.api.mcp.targets import WireTarget

    cfg = mcp_settings(args)
    logging.basicConfig(  # stdout carries JSON-RPC: logs go to stderr
        stream=sys.stderr,
        level=str(cfg["log_level"]).upper(),
        format="[hatiproxy-mcp] %(levelname)s %(message)s",
    )
    target = WireTarget(
        host=cfg["host"],
        port=cfg["port"],
        database=cfg["database"],
        user=cfg["user"],
        password=cfg["api_key"],
        agent_id=cfg["agent_id"],
    )
    log.info(
        "serving MCP on stdio for %s:%s as agent %s",
        cfg["host"],
        cfg["port"],
        cfg["agent_id"] or "(the key's, or the server's default)",
    )
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve_stdio, target)
    return 0


AUTH_ERROR = -32001  # JSON-RPC server error range: the login to hatiproxy was refused


def login_refused(target: Any, exc: Exception) -> str | None:
    """The message for a login the server refused, or None if it was not reached."""
    text = str(exc)
    if "fe_sendauth" not in text and "FATAL:" not in text:
        return None  # refused connection, timeout, unknown host: not an answer
    reason = text.rsplit("failed: ", 1)[-1].replace("FATAL:", "").strip()
    reason = " ".join(reason.split())
    where = f"{target.params['host']}:{target.params['port']}"
    hint = ""
    if "password" in reason or "fe_sendauth" in reason or "authentication" in reason:
        hint = (
            " (give the API key with --api-key KEY, api_key in a --config FILE, "
            "or HATIDATA_API_KEY)"
        )
    return f"hatiproxy at {where} refused the login: {reason}{hint}"


async def serve_stdio(target: Any) -> None:
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    from proxy.api.mcp.server import build_server

    server = build_server(lambda ctx: target)
    refused: str | None = None  # the server's answer to a login it refused
    try:
        await target.connect()
    except Exception as exc:
        refused = login_refused(target, exc)
        if refused is None:  # not listening yet: calls connect again
            log.warning("cannot reach hatiproxy yet (%s); tool calls will retry", exc)
        else:
            log.error("%s", refused)
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            async with send:
                async for item in read_stream:
                    if refused is not None and not isinstance(item, Exception):
                        # The key was refused: every request (initialize first) gets
                        # that error; nothing reaches the Server.
                        request = item.message
                        if isinstance(request, types.JSONRPCRequest):
                            error = types.JSONRPCError(
                                jsonrpc="2.0",
                                id=request.id,
                                error=types.ErrorData(code=AUTH_ERROR, message=refused),
                            )
                            await write_stream.send(SessionMessage(error))
                        continue
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
