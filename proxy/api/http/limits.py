"""Pure ASGI middlewares for the HTTP interfaces (REST and MCP over HTTP): body size and rate.

`BodyLimit(app, max_bytes)`: a declared Content-Length over the limit is answered 413
before a byte of the body is read; a chunked (or under-declared) body is counted while
the app reads it, and the moment it passes the limit the app's `receive()` raises. If the
app had not started its response, whatever it tries to send after that is dropped and
the client gets the 413; if it had, the connection is aborted (an exception out of the
app makes the server close it), because a response cannot be taken back halfway.
The unread rest of a refused body is discarded by the server, not buffered.

`RateLimit(app, per_minute, key=source_key)`: a token bucket per caller (`per_minute`
tokens, refilled continuously), so a caller may burst up to a minute's allowance and
then runs at the steady rate. Buckets belong to whoever authenticated: `CallerKey`
names the bucket after the API key id (or configured user) the server accepts, and
anything else (no credentials, unknown, revoked or made-up keys) after the source
address, so a client cannot mint itself fresh buckets with junk keys. The default,
without a resolver, is the address alone. Over the limit: 429 with `Retry-After`.
`/health` and `/metrics` are never limited. At most `max_keys` buckets are kept (least
recently used dropped: that caller just starts with a full bucket again).

Both handle `http` scopes only; `lifespan` and `websocket` pass straight through.
"""

from __future__ import annotations

import inspect
import json
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

from proxy.access.throttle import normalize_source

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

EXEMPT_PATHS = frozenset({"/health", "/metrics"})


async def send_json(
    send: Send,
    status: int,
    payload: dict[str, Any],
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    body = json.dumps(payload).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head + list(headers)})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value
    return None


# ---- body size -------------------------------------------------------------------------


class BodyTooLarge(Exception):
    """Raised from receive() once the body passes the limit (the app should not catch it)."""


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes  # <= 0: no limit

    def _refusal(self) -> dict[str, str]:
        return {
            "error": "payload_too_large",
            "message": f"request body exceeds {self.max_bytes} bytes",
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.max_bytes <= 0:
            return await self.app(scope, receive, send)
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > self.max_bytes:
            return await send_json(send, 413, self._refusal())

        received = 0
        exceeded = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            if exceeded:
                raise BodyTooLarge(self._refusal()["message"])
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    exceeded = True
                    raise BodyTooLarge(self._refusal()["message"])
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded:
                return  # e.g. the 500 an error middleware makes of BodyTooLarge
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not exceeded:
                raise
        if not exceeded:
            return
        if started:  # half a response is out: only closing the connection tells the client
            raise BodyTooLarge(self._refusal()["message"])
        await send_json(send, 413, self._refusal())


# ---- rate ------------------------------------------------------------------------------


def source_key(scope: Scope) -> str:
    """The bucket of an unauthenticated caller: its (normalised) client address."""
    client = scope.get("client")
    return "addr:" + (normalize_source(client[0]) if client else "unknown")


# Authorization header value -> the accepted principal's id, or None (not accepted).
Resolve = Callable[[str], Awaitable[str | None]]


class CallerKey:
    """Bucket names: `key:<id>` for credentials `resolve` accepts, else the address."""

    def __init__(self, resolve: Resolve) -> None:
        self.resolve = resolve

    async def __call__(self, scope: Scope) -> str:
        auth = _header(scope, b"authorization")
        if auth:
            principal = await self.resolve(auth.decode("latin-1"))
            if principal:
                return "key:" + principal
        return source_key(scope)


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class RateLimit:
    def __init__(
        self,
        app: ASGIApp,
        per_minute: int,
        *,
        key: Callable[[Scope], str | Awaitable[str]] = source_key,
        exempt: Iterable[str] = EXEMPT_PATHS,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.per_minute = per_minute  # <= 0: unlimited
        self.key = key
        self.exempt = frozenset(exempt)
        self.max_keys = max(1, max_keys)
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, key: str) -> float:
        """Spend one token for `key`: 0 when allowed, else seconds until one is available."""
        rate = self.per_minute / 60.0  # tokens per second
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(self.per_minute), now)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            elapsed = max(0.0, now - bucket.stamp)
            bucket.tokens = min(float(self.per_minute), bucket.tokens + elapsed * rate)
            bucket.stamp = now
            self._buckets.move_to_end(key)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.per_minute <= 0 or scope.get("path") in self.exempt:
            return await self.app(scope, receive, send)
        name = self.key(scope)
        if inspect.isawaitable(name):
            name = await name
        wait = self.take(name)
        if wait <= 0:
            return await self.app(scope, receive, send)
        retry_after = max(1, math.ceil(wait))
        payload = {
            "error": "rate_limited",
            "message": f"more than {self.per_minute} requests per minute; retry in {retry_after} s",
            "retry_after": retry_after,
        }
        await send_json(send, 429, payload, [(b"retry-after", str(retry_after).encode())])
