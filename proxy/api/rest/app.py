"""Assemble the REST app and serve it on rest_port inside the server's event loop."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from fastapi import FastAPI

from proxy import __version__
from proxy.api.http.asgi_host import AsgiListener, guarded
from proxy.api.rest import (
    branch_approval,
    branch_triggers,
    branches,
    cot,
    errors,
    functions,
    inbox,
    key_usage,
    keys,
    memory,
    memory_batch,
    ops,
    transpile,
    triggers,
)
from proxy.api.rest.console import branches_pages as console_branches
from proxy.api.rest.console import keys_pages as console_keys
from proxy.api.rest.console import memories_pages as console_memories
from proxy.api.rest.console import pages as console_pages
from proxy.api.rest.console import triggers_pages as console_triggers

if TYPE_CHECKING:
    from proxy.execution.services import Services

log = logging.getLogger("hatiproxy.rest")

DESCRIPTION = """\
The hatiproxy control plane: agent memory, chain-of-thought ledger, semantic
triggers, branches, API keys and SQL transpilation, over the same agent layer as SQL and MCP.
Authenticate with `Authorization: ApiKey <key>` (or `Bearer <key>`). Every error is
JSON `{"error": <code>, "message": ...}`.
"""


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="hatiproxy control plane",
        version=__version__,
        description=DESCRIPTION,
        docs_url=None,
        redoc_url=None,
        responses=errors.COMMON_ERRORS,
    )
    app.state.services = services
    errors.install(app)
    # branch_triggers before triggers: its fixed path segment must win over {trigger_id}.
    routers = (ops, memory, branch_triggers, triggers, branches, cot, branch_approval, keys)
    for module in (*routers, inbox, key_usage, transpile, functions):
        app.include_router(module.router)
    app.include_router(memory_batch.router)
    app.include_router(console_pages.router)
    app.include_router(console_triggers.router)
    app.include_router(console_keys.router)
    app.include_router(console_memories.router)
    app.include_router(console_branches.router)
    app.mount("/console/static", console_pages.static, name="console-static")
    return app


async def start(services: Services) -> AsgiListener | None:
    """Start the REST API on config.rest_port (None when the port is 0 = off)."""
    config = services.config
    if not config.rest_port:
        return None
    app = guarded(
        create_app(services),
        config,
        lambda status: services.metrics.observe_http("rest", status),
        services.access.bucket_of,
    )
    listener = AsgiListener(app, config.host, config.rest_port)
    await listener.start()
    log.info("REST control plane on http://%s:%d", config.host, listener.port)
    return listener
