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
authentication (`AccessControl.identity_from_header`: 401, the same API keys as
REST and the wire), the tool's scope (403 before anything runs), and handing the
caller's `Identity` to the tool handler through the ASGI scope. It runs under
uvicorn in the server's own event loop (proxy.api.http.asgi_host), so tools call the agent
layer directly.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from proxy.access.service import AccessControl, AuthError, TooManyFailures
from proxy.api.http.asgi_host import AsgiListener, guarded
from proxy.api.mcp.server import build_server
from proxy.api.mcp.targets import LayerTarget
from proxy.api.mcp.tools import TOOLS
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

if TYPE_CHECKING:
    from proxy.agent.layer import AgentLayer
    from proxy.execution.services import Services

log = logging.getLogger("hatiproxy.mcp")
IDENTITY_KEY = "hatiproxy.identity"  # where the ASGI scope carries the caller
MAX_BODY = 32 * 1024 * 1024  # a 10 MB memory, JSON-escaped, reaches the memory checks


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

    def __init__(self, app: Any, access: AccessControl) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # lifespan: the mcp session manager's task group
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client")
        try:
            who = await self.access.identity_from_header(headers, client[0] if client else None)
        except TooManyFailures as exc:
            body = _rpc_error(None, -32001, str(exc), {"code": "too_many_auth_failures"})
            retry = str(max(1, round(exc.retry_after))).encode()
            return await _respond(send, 429, body, [(b"retry-after", retry)])
        except AuthError as exc:
            body = _rpc_error(None, -32001, f"unauthorized: {exc}", {"code": "unauthorized"})
            return await _respond(send, 401, body, [(b"www-authenticate", b"ApiKey")])
        except AgentError as exc:  # e.g. an agent key asked to act as another agent
            body = _rpc_error(None, -32003, exc.message, {"code": exc.code})
            return await _respond(send, exc.http_status, body)
        if scope["method"] == "POST":
            refusal = _content_type_refusal(headers.get("content-type"))
            if refusal is not None:
                return await _respond(send, 400, refusal)
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
        except RecursionError:
            # Nested deeper than the parser's stack (e.g. 100,000 `[`): a client error,
            # answered as REST answers it (400), not a 500 from the crashed pre-check.
            return 400, _rpc_error(
                None,
                -32700,
                "Parse error: the JSON body is nested too deeply",
                {"code": "too_deep"},
            )
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


def _content_type_refusal(content_type: str | None) -> bytes | None:
    """A JSON-RPC error for a POST that is not `application/json`, else None.

    The transport's own check (the same rule: the value starts with application/json)
    answers in plain text; an MCP client expects JSON-RPC."""
    if content_type is not None and content_type.strip().lower().startswith("application/json"):
        return None
    got = f"got {content_type.strip()!r}" if content_type else "none was sent"
    return _rpc_error(
        None,
        -32600,
        f"Content-Type must be application/json ({got}): MCP over HTTP takes "
        "JSON-RPC messages in the request body",
        {"code": "unsupported_content_type"},
    )


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


def build_app(layer: AgentLayer, access: AccessControl, host: str = "127.0.0.1") -> AuthLayer:
    def target_for(ctx: Any) -> LayerTarget:
        return LayerTarget(layer, ctx.request.scope[IDENTITY_KEY])

    server = build_server(target_for)
    # host: the package turns on DNS-rebinding protection (Host/Origin checks) on loopback.
    app = server.streamable_http_app(
        stateless_http=True, json_response=True, host=host, max_request_body_size=MAX_BODY
    )
    return AuthLayer(app, access)


async def start(services: Services) -> AsgiListener | None:
    """Start MCP over HTTP on config.mcp_port (None when the port is 0 = off)."""
    config, access = services.config, services.access
    if not config.mcp_port:
        return None
    app = build_app(services.agent, access, config.host)
    app = guarded(
        app, config, lambda status: services.metrics.observe_http("mcp", status), access.bucket_of
    )
    listener = AsgiListener(app, config.host, config.mcp_port)
    await listener.start()
    auth = "trust, loopback" if access.trust else "API keys / user passwords"
    log.info("MCP over HTTP on http://%s:%d/mcp (auth: %s)", config.host, listener.port, auth)
    return listener
