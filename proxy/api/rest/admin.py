"""The local admin channel's listener: the REST app for the data directory's owner.

`start_admin` serves a second instance of the REST app on 127.0.0.1 (an ephemeral port)
behind `TokenGate`: every request must carry `Authorization: Bearer <token>`, the token
the server wrote to `<data_dir>/hatiproxy-admin.json` (mode 0600, see
proxy/core/admin_channel.py). Requests that pass act as the server superuser on the
organisation of their path (`auth.caller` checks `app.state.admin`), so `hatiproxy keys`
uses the public key routes, with their validation, while the server runs. Two routes
exist only here: `GET /v1/admin/server` (which database, which organisation) and
`GET /v1/admin/api-keys` (every key of every organisation, for `keys list --all-orgs`
and to find a key's organisation by its id).
"""

from __future__ import annotations

import hmac
import logging
import os
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request

from proxy import __version__
from proxy.api.http.asgi_host import AsgiListener
from proxy.api.http.limits import BodyLimit
from proxy.api.rest.app import create_app
from proxy.api.rest.auth import access_of
from proxy.api.rest.errors import error
from proxy.api.rest.keys import KeyInfo
from proxy.core import admin_channel
from proxy.core.errors import AgentError

if TYPE_CHECKING:
    from proxy.execution.services import Services

log = logging.getLogger("hatiproxy.rest")
router = APIRouter(prefix="/v1/admin", tags=["local admin"])


class TokenGate:
    """ASGI: only requests bearing the admin token reach the app (401 JSON otherwise)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given.strip().lower(), self._expected.lower()):
                response = error(401, "unauthorized", "the local admin token is required here")
                return await response(scope, receive, send)
        return await self.app(scope, receive, send)


def _require_admin(request: Request) -> None:
    if not getattr(request.app.state, "admin", False):  # never on the public REST app
        raise AgentError.not_found("not found")


@router.get("/server", summary="Which server and database this channel reaches")
async def server_info(request: Request) -> dict[str, Any]:
    _require_admin(request)
    services = request.app.state.services
    config = services.config
    return {
        "pid": os.getpid(),
        "version": __version__,
        "database": config.database_path,
        "data_dir": config.data_dir,
        "org_id": config.org_id,
        "trust": services.access.trust,
        "wire": request.app.state.wire,
    }


@router.get("/api-keys", response_model=list[KeyInfo], summary="Every key of every organisation")
async def all_keys(request: Request) -> list[dict[str, Any]]:
    _require_admin(request)
    return [key.as_dict() for key in await access_of(request).list_keys(None)]


async def start_admin(services: Services, wire: str) -> tuple[AsgiListener, admin_channel.Channel]:
    """Serve the admin app on 127.0.0.1; the caller writes the channel file once all runs."""
    app = create_app(services)
    app.include_router(router)
    app.state.admin = True
    app.state.wire = wire
    token = admin_channel.Channel.new_token()
    gated = TokenGate(BodyLimit(app, services.config.max_request_body_bytes), token)
    listener = AsgiListener(gated, "127.0.0.1", 0)
    await listener.start()
    channel = admin_channel.Channel(
        os.getpid(),
        f"http://127.0.0.1:{listener.port}",
        token,
        services.config.database_path,
        wire,
    )
    return listener, channel
