"""Serve an ASGI app with uvicorn inside the server's own event loop.

MCP over HTTP and the REST control plane both run this way: a task in the loop that
also runs the wire server, so handlers call the agent layer directly. The socket is
bound before uvicorn starts, so a busy port fails `Server.start()` with an OSError
instead of uvicorn's sys.exit; uvicorn's signal handling is off (the hatiproxy
server owns SIGINT/SIGTERM).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import uvicorn

from proxy.api.http.limits import BodyLimit, CallerKey, RateLimit, Resolve, source_key

if TYPE_CHECKING:
    from proxy.core.config import Config
from proxy.core.net import listen_socket

log = logging.getLogger("hatiproxy.http")


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _quiet_uvicorn() -> None:
    for name in ("uvicorn.error", "mcp"):
        quiet = logging.getLogger(name)  # per-request chatter at INFO is noise here
        if quiet.level == logging.NOTSET and logging.getLogger().level > logging.DEBUG:
            quiet.setLevel(logging.WARNING)


class CountStatus:
    """ASGI: report every answered request's status (for /metrics)."""

    def __init__(self, app: Any, observe: Callable[[int], None]) -> None:
        self.app = app
        self.observe = observe

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def counting_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                self.observe(message["status"])
            await send(message)

        await self.app(scope, receive, counting_send)


def guarded(
    app: Any, config: Config, observe: Callable[[int], None], resolve: Resolve | None = None
) -> Any:
    """The limits every HTTP interface shares: count, then rate-limit, then cap the body.

    `resolve` (AccessControl.bucket_of) names rate buckets after accepted keys; without
    it every caller is counted by address."""
    key = CallerKey(resolve) if resolve is not None else source_key
    body_limited = BodyLimit(app, config.max_request_body_bytes)
    return CountStatus(RateLimit(body_limited, config.rate_limit_per_minute, key=key), observe)


class AsgiListener:
    """One ASGI app on one port; `start()` returns once it accepts connections."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._server: _Uvicorn | None = None
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        sock = listen_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        _quiet_uvicorn()
        config = uvicorn.Config(
            self.app,
            lifespan="on",
            log_config=None,  # keep hatiproxy's logging setup
            access_log=False,
            timeout_graceful_shutdown=5,
            server_header=False,
        )
        self._server = _Uvicorn(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises the start-up failure
                raise RuntimeError(f"HTTP server on port {self.port} stopped during start-up")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 10)
        except (TimeoutError, asyncio.CancelledError):
            self._task.cancel()
        except Exception:
            log.exception("HTTP server on port %d failed", self.port)
        self._server = None
