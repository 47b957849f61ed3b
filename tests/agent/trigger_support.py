"""Shared helpers for the trigger tests: agent-function calls, fire polling, a webhook receiver."""

from __future__ import annotations

import http.server
import json
import threading
import time
from typing import Any

import pytest
from agent_support import who

from proxy.agent.layer import AgentLayer
from proxy.core.errors import AgentError
from proxy.core.identity import Identity


async def call(layer: AgentLayer, fn: str, ident: Identity, /, **kwargs: Any) -> list[dict]:
    # Through the registry (not layer.call): a `name` argument would clash with its own.
    return await layer.registry.get(fn).call(layer, ident, [], kwargs)


async def register(layer: AgentLayer, ident: Identity | None = None, /, **kwargs: Any) -> dict:
    kwargs.setdefault("name", "t")
    kwargs.setdefault("concept", "refund request")
    return (await call(layer, "register_trigger", ident or who(), **kwargs))[0]


def rows(layer: AgentLayer, sql: str, params: list | None = None) -> list[tuple]:
    return layer.db.run_sync(lambda cur: cur.execute(sql, params or []).fetchall())


async def fires(layer: AgentLayer, trigger_id: str, ident: Identity | None = None) -> list[dict]:
    return await call(layer, "trigger_fires", ident or who(), trigger_id=trigger_id)


async def notify_and_drain(layer: AgentLayer, text: str, ident: Identity | None = None) -> None:
    layer.triggers.notify(ident or who(), "memory", f"m-{time.monotonic_ns()}", text, None)
    await layer.triggers.drain()


async def expect_error(code: str, coro: Any) -> AgentError:
    with pytest.raises(AgentError) as err:
        await coro
    assert err.value.code == code, err.value.message
    return err.value


# --- a local webhook receiver ---------------------------------------------------------


class Receiver:
    """http.server on a thread: answers with queued status codes (then 200), keeps bodies."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.requests: list[tuple[dict[str, str], dict]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((dict(self.headers), json.loads(body)))
                status = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
