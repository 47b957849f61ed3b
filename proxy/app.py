"""The composition root: builds every part once, wires them together, starts and stops them.

The only module that knows all layers: the wire server (proxy.pgserver), MCP over HTTP
(proxy.api.mcp) and the REST control plane (proxy.api.rest) each get the same
`Services` and never import one another.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

from proxy.api.http.asgi_host import AsgiListener
from proxy.api.mcp import http as mcp_http
from proxy.api.rest import admin as rest_admin
from proxy.api.rest import app as rest_app
from proxy.core import admin_channel
from proxy.core.config import Config
from proxy.db.engine import Engine
from proxy.execution.services import Services
from proxy.pgserver.server import Server
from proxy.semantic import embedded_columns

log = logging.getLogger("hatiproxy.app")


class App:
    def __init__(self, config: Config, engine: Engine | None = None) -> None:
        self.config = config
        self.services = Services.build(config, engine)
        self.engine = self.services.engine
        self.agent = self.services.agent
        self.access = self.services.access
        self.metrics = self.services.metrics
        self.wire = Server(self.services)
        self.mcp: AsgiListener | None = None  # MCP over HTTP, while it runs
        self.rest: AsgiListener | None = None  # the REST control plane, while it runs
        self.admin: AsgiListener | None = None  # the local admin channel (hatiproxy keys)
        self.channel: admin_channel.Channel | None = None
        self._filler: asyncio.Task[None] | None = None
        # Set when shutdown begins (by the signal thread, or close()): background Python
        # work such as the column filler checks it between model passes.
        self.stopping = threading.Event()

    @property
    def port(self) -> int:
        return self.wire.port

    async def start(self) -> None:
        semantic = self.services.semantic
        await semantic.start()
        await self.agent.start()
        if semantic.embedder is not None:
            interval = self.config.embedding_flush_interval_ms / 1000
            self._filler = asyncio.create_task(
                embedded_columns.filler(self.engine, semantic.bulk, interval, self.stopping.is_set)
            )
        # HTTP first: once the wire port answers, /mcp and /v1 answer too.
        self.mcp = await mcp_http.start(self.services)  # None when mcp_port = 0
        self.rest = await rest_app.start(self.services)
        await self.wire.start()
        await self._open_admin_channel()

    async def _open_admin_channel(self) -> None:
        """The local admin channel (`hatiproxy keys` while the server runs): a loopback
        listener and, once everything answers, its file in the data directory."""
        wire = f"{self.config.host}:{self.wire.port}"
        self.admin, channel = await rest_admin.start_admin(self.services, wire)
        try:
            Path(self.config.data_dir).mkdir(parents=True, exist_ok=True)
            path = admin_channel.write(self.config.data_dir, channel)
        except OSError as exc:
            log.warning("no local admin channel (hatiproxy keys needs the REST API): %s", exc)
            return
        self.channel = channel
        log.info("local admin channel for `hatiproxy keys`: %s (owner only)", path)

    async def serve_forever(self) -> None:
        await self.wire.serve_forever()

    async def close(self) -> None:
        """Stop everything, each part bounded: statements (a column fill included) are
        interrupted, what they committed stays, pending cache entries are written."""
        self.stopping.set()
        if self.channel is not None:  # first: a CLI must not find a server that is stopping
            admin_channel.remove(self.config.data_dir, self.channel.token)
            self.channel = None
        for http in (self.admin, self.rest, self.mcp):
            if http is not None:
                await http.stop()  # before the agent layer they call into stops
        await self.wire.close()
        if self._filler is not None:
            self._filler.cancel()
        await self.agent.stop()  # flushes access counts, finishes queued embeddings
        await self.services.semantic.stop()

    def abandoned(self) -> str:
        """What exiting right now would leave undone (the log line of a forced exit)."""
        parts = []
        running = [b for b in self.engine.backends.all() if b.activity.now[0] == "active"]
        if running:
            queries = "; ".join(b.activity.now[1][:60] for b in running[:3])
            parts.append(f"{len(running)} running statement(s), rolled back ({queries})")
        embedder = self.services.semantic.embedder
        pending = embedder.pending if embedder is not None else 0
        if pending:
            parts.append(f"{pending} embedding cache entries not written (recomputed on use)")
        return ", ".join(parts) or "nothing"

    async def scrape_metrics(self) -> bytes:
        return await self.services.scrape_metrics()
