"""Console sign-in: the API key cookie, the CSRF token tied to it, the Caller it makes."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import parse_qs

from fastapi import Request

from proxy.access.service import AuthError
from proxy.api.rest.auth import Caller, access_of

COOKIE = "hatiproxy_console"
TRUST = "-"  # cookie value when signed in without a key (trust mode)


def console_secret(request: Request) -> bytes:
    """A per-process secret: CSRF tokens die with the server, which is fine for a console."""
    state = request.app.state
    if not getattr(state, "console_secret", None):
        state.console_secret = secrets.token_bytes(32)
    return state.console_secret


def csrf_token(request: Request) -> str:
    cookie = request.cookies.get(COOKIE, "")
    return hmac.new(console_secret(request), cookie.encode(), hashlib.sha256).hexdigest()


async def form(request: Request) -> dict[str, str]:
    """The urlencoded body (first value of each field)."""
    body = (await request.body()).decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}


def csrf_ok(request: Request, fields: dict[str, str]) -> bool:
    cookie = request.cookies.get(COOKIE)
    return cookie is not None and hmac.compare_digest(fields.get("csrf", ""), csrf_token(request))


async def console_caller(request: Request) -> Caller | None:
    """The signed-in caller, or None (no cookie, or a key the server no longer accepts)."""
    cookie = request.cookies.get(COOKIE)
    if cookie is None:
        return None
    headers = {} if cookie == TRUST else {"authorization": f"ApiKey {cookie}"}
    host = request.client.host if request.client else None
    try:
        who, principal = await access_of(request).resolve(headers, host)
    except AuthError:
        return None
    return Caller(who.org_id, principal, who)
