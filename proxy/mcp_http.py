"""MCP over HTTP inside the server process: `POST http://HOST:<mcp_port>/mcp`.

Transport: the `mcp` package's streamable-HTTP app (`Server.streamable_http_app`)
with `stateless_http=True, json_response=True`. Checked against what the public
HatiData client sends: a lone `tools/call` with no prior `initialize`, no
`Mcp-Session-Id` header and httpx's default `Accept: */*` is answered with a plain
`application/json` JSON-RPC response (the transport treats */* as accepting JSON,
stateless mode has no handshake gate); `initialize` and `tools/list` work too, and
notifications get 202. So the package serves the protocol and nothing is
re-implemented. JSON-RPC batches (arrays) are refused with -32600: MCP removed
batching in its 2025-06-18 revision.

In front of it, one small ASGI layer does what the package does not know about:
authentication (`resolve_identity`: 401), the tool's scope (403 before anything
runs), and handing the caller's `Identity` to the tool handler through the ASGI
scope. uvicorn runs in the server's own event loop, as a task, so tools call the
agent layer directly; its signal handling is off (the server owns SIGINT/SIGTERM).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import logging
import socket
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import uvicorn

from proxy.agent.base import AgentError, Identity
from proxy.mcp_backends import LayerBackend
from proxy.mcp_server import build_server
from proxy.mcp_tools import TOOLS

if TYPE_CHECKING:
    from proxy.agent.layer import AgentLayer
    from proxy.config import Config

log = logging.getLogger("hatiproxy.mcp")
IDENTITY_KEY = "hatiproxy.identity"  # where the ASGI scope carries the caller
AGENT_HEADER = "x-hatidata-agent-id"
DEFAULT_AGENT = "mcp-agent"
MAX_BODY = 32 * 1024 * 1024  # a 10 MB memory, JSON-escaped, reaches the memory checks


class AuthError(Exception):
    pass


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return host == "localhost"


def resolve_identity(headers: Mapping[str, str], client_host: str | None, layer: Any) -> Identity:
    """Who is calling. Raises AuthError (401).

    No users configured (trust): loopback clients (or any, with allow_remote_trust)
    act as the agent named by `X-Hatidata-Agent-Id`, default mcp-agent. Users
    configured: `Authorization: ApiKey <secret>` (or Bearer) must equal a user's
    password, and that user is the agent. Issue 6 replaces this with real API keys.
    """
    config = layer.config
    passwords: dict[str, str] = config.user_passwords
    if not passwords:
        if not (_is_loopback(client_host) or config.allow_remote_trust):
            raise AuthError("trust mode accepts loopback clients only; configure users or keys")
        agent = (headers.get(AGENT_HEADER) or "").strip() or DEFAULT_AGENT
        return Identity(config.org_id, agent, "")
    scheme, _, secret = (headers.get("authorization") or "").strip().partition(" ")
    secret = secret.strip()
    if scheme.lower() not in ("apikey", "bearer") or not secret:
        raise AuthError("missing credentials: send 'Authorization: ApiKey <key>'")
    found = None
    for user, password in passwords.items():  # no early exit: timing says nothing
        if hmac.compare_digest(secret.encode(), password.encode()) and found is None:
            found = user
    if found is None:
        raise AuthError("invalid API key")
    return Identity(config.org_id, found, found)


def _rpc_error(rid: Any, code: int, message: str, data: dict[str, Any] | None = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode()


async def _respond(send: Any, status: int, body: bytes, extra: list | None = None) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})


class AuthLayer:
    """ASGI: authenticate, check the tool's scope, pass the Identity on to the mcp app."""

    def __init__(self, app: Any, layer: AgentLayer) -> None:
        self.app = app
        self.layer = layer

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # lifespan: the mcp session manager's task group
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client")
        try:
            who = resolve_identity(headers, client[0] if client else None, self.layer)
        except AuthError as exc:
            body = _rpc_error(None, -32001, f"unauthorized: {exc}", {"code": "unauthorized"})
            return await _respond(send, 401, body, [(b"www-authenticate", b"ApiKey")])
        if scope["method"] == "POST":
            raw = b""
            more = True
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                raw += message.get("body", b"")
                more = message.get("more_body", False)
                if len(raw) > MAX_BODY:
                    body = _rpc_error(None, -32600, f"request body over {MAX_BODY} bytes")
                    return await _respond(send, 413, body)
            refusal = self._precheck(raw, who)
            if refusal is not None:
                return await _respond(send, *refusal)
            receive = _replay(raw, receive)
        if "accept" not in headers:  # RFC 9110: no Accept = anything; the transport wants one
            scope = {**scope, "headers": [*scope["headers"], (b"accept", b"application/json")]}
        scope[IDENTITY_KEY] = who
        await self.app(scope, receive, send)

    @staticmethod
    def _precheck(raw: bytes, who: Identity) -> tuple[int, bytes] | None:
        try:
            message = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return None  # the transport answers -32700
        if isinstance(message, list):
            return 400, _rpc_error(None, -32600, "JSON-RPC batches are not supported by MCP")
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        tool = TOOLS.get(params.get("name")) if isinstance(params, dict) else None
        if tool is None:
            return None  # unknown tool: an error result from the dispatcher
        try:
            who.require(tool.scope)
        except AgentError as exc:
            error = _rpc_error(message.get("id"), -32003, exc.message, {"code": exc.code})
            return 403, error
        return None


def _replay(raw: bytes, receive: Any) -> Any:
    """The body already read, then the client's own events (a disconnect)."""
    sent = False

    async def replay() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return replay


def build_app(layer: AgentLayer, host: str = "127.0.0.1") -> AuthLayer:
    def backend_for(ctx: Any) -> LayerBackend:
        return LayerBackend(layer, ctx.request.scope[IDENTITY_KEY])

    server = build_server(backend_for)
    # host: the package turns on DNS-rebinding protection (Host/Origin checks) on loopback.
    app = server.streamable_http_app(
        stateless_http=True, json_response=True, host=host, max_request_body_size=MAX_BODY
    )
    return AuthLayer(app, layer)


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the hatiproxy server owns SIGINT/SIGTERM, uvicorn must not take them


class McpHttp:
    """The MCP HTTP listener, started and stopped by proxy.server.Server."""

    def __init__(self, layer: AgentLayer, config: Config) -> None:
        self.layer = layer
        self.config = config
        self._server: _Uvicorn | None = None
        self._task: asyncio.Task | None = None
        self.port = 0

    async def start(self) -> None:
        # Bind here, so a busy port fails Server.start() (uvicorn would sys.exit).
        sock = socket.create_server((self.config.host, self.config.mcp_port), backlog=128)
        self.port = sock.getsockname()[1]
        for name in ("uvicorn.error", "mcp"):
            quiet = logging.getLogger(name)  # per-request chatter at INFO is noise here
            if quiet.level == logging.NOTSET and logging.getLogger().level > logging.DEBUG:
                quiet.setLevel(logging.WARNING)
        app = build_app(self.layer, self.config.host)
        uv_config = uvicorn.Config(
            app,
            lifespan="on",
            log_config=None,  # keep hatiproxy's logging setup
            access_log=False,
            timeout_graceful_shutdown=5,
            server_header=False,
        )
        self._server = _Uvicorn(uv_config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises the start-up failure
                raise RuntimeError("MCP HTTP server stopped during start-up")
            await asyncio.sleep(0.01)
        auth = "ApiKey = a user's password" if self.config.user_passwords else "trust, loopback"
        log.info("MCP over HTTP on http://%s:%d/mcp (auth: %s)", self.config.host, self.port, auth)

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 10)
        except (TimeoutError, asyncio.CancelledError):
            self._task.cancel()
        except Exception:
            log.exception("MCP HTTP server failed")
        self._server = None


async def start(layer: AgentLayer, config: Config) -> McpHttp | None:
    """Start MCP over HTTP on config.mcp_port (None when the port is 0 = off)."""
    if not config.mcp_port:
        return None
    mcp = McpHttp(layer, config)
    await mcp.start()
    return mcp
