"""Webhook delivery for semantic triggers: an HTTP POST of JSON, with timeout and retries.

Standard library only (urllib on a small thread pool of its own), so a slow or dead
endpoint never holds an engine worker thread or the event loop. A delivery is up to
`max_attempts` POSTs; connection errors, timeouts, 408, 429 and 5xx are retried after
`backoff * 2**(n-1)` seconds, other answers are final. Redirects are not followed (a
POST silently turning into a GET would lose the body). Every attempt is handed to a
`record` callback, so the caller can store it before the next one starts.

Before each attempt the destination passes the SSRF guard (`proxy.agent.triggers.webhook_guard`):
the host name is resolved, every address checked, and the connection is made to those
checked addresses (TLS still verifies the name), so a name cannot be re-pointed at a
refused address between the check and the connect (DNS rebinding). A refused address
fails the attempt for good (not retried). One gap stays: when an environment proxy
(http_proxy / https_proxy) carries the request, the proxy resolves the name itself.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import http.client
import ipaddress
import json
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from proxy.agent.triggers.webhook_guard import DEFAULT_GUARD, WebhookGuard, WebhookRefused

DEFAULT_TIMEOUT_SECS = 5.0
MAX_TIMEOUT_SECS = 30.0
DEFAULT_MAX_ATTEMPTS = 3
MAX_ATTEMPTS = 10
USER_AGENT = "hatiproxy-triggers/1"
_RETRY_STATUS = frozenset({408, 429})
_MAX_ERROR_CHARS = 500


class WebhookConfigError(ValueError):
    """action_config does not describe a usable webhook."""


@dataclass(frozen=True)
class WebhookConfig:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT_SECS
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    secret: str | None = None  # when set, the body is signed (X-Hatidata-Signature)


@dataclass(frozen=True)
class Attempt:
    attempt: int  # 1-based
    ok: bool
    status_code: int | None
    error: str | None
    duration_ms: float
    retryable: bool


def parse_config(cfg: dict[str, Any]) -> WebhookConfig:
    """The webhook settings of a trigger's action_config; raises WebhookConfigError."""
    url = cfg.get("url", cfg.get("webhook_url"))
    if not isinstance(url, str) or not url.strip():
        raise WebhookConfigError("the webhook action needs action_config.url (an http(s) URL)")
    url = url.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookConfigError(f"action_config.url must be an http or https URL, got {url!r}")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        raise WebhookConfigError(f"action_config.url has a bad port: {url!r}") from exc
    headers = cfg.get("headers") or {}
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and "\n" not in k + v for k, v in headers.items()
    ):
        raise WebhookConfigError("action_config.headers must be an object of string values")
    timeout = cfg.get("timeout_secs", DEFAULT_TIMEOUT_SECS)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT_SECS
    ):
        raise WebhookConfigError(
            f"action_config.timeout_secs must be a number in (0, {MAX_TIMEOUT_SECS:g}]"
        )
    attempts = cfg.get("max_attempts", DEFAULT_MAX_ATTEMPTS)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= 10:
        raise WebhookConfigError(f"action_config.max_attempts must be an integer 1..{MAX_ATTEMPTS}")
    secret = cfg.get("secret")
    if secret is not None and not isinstance(secret, str):
        raise WebhookConfigError("action_config.secret must be a string")
    return WebhookConfig(url, dict(headers), float(timeout), attempts, secret or None)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001
        return None  # urllib then raises HTTPError with the 3xx code


def _connect_any(
    addresses: list[str],
    address: tuple[str, int],
    timeout: float | None,
    source_address: tuple[str, int] | None = None,
) -> socket.socket:
    """http.client's connect step, aimed at the checked addresses instead of a new lookup."""
    error: OSError | None = None
    for ip in addresses:
        try:
            return socket.create_connection((ip, address[1]), timeout, source_address)
        except OSError as exc:
            error = exc
    raise error or OSError("no address to connect to")


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host: str, *, addresses: list[str], **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._create_connection = functools.partial(_connect_any, addresses)


class _PinnedHTTPS(http.client.HTTPSConnection):
    # Only the TCP connect is re-aimed: SNI and certificate checks still use the host name.
    def __init__(self, host: str, *, addresses: list[str], **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._create_connection = functools.partial(_connect_any, addresses)


class _PinnedHandler(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    def __init__(self, addresses: list[str]) -> None:
        urllib.request.HTTPHandler.__init__(self)
        self.addresses = addresses
        self.tls = ssl.create_default_context()

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_PinnedHTTP, addresses=self.addresses), req)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        pinned = functools.partial(_PinnedHTTPS, addresses=self.addresses)
        return self.do_open(pinned, req, context=self.tls)


def _env_proxy(url: str) -> bool:
    """Whether urllib would send this URL through an environment proxy."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if _is_loopback(host):
        return False  # a local endpoint is never reached through a proxy
    return parts.scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(host)


def _unsent(attempt: int, error: str, started: float, *, retryable: bool) -> Attempt:
    elapsed = (time.perf_counter() - started) * 1000.0
    return Attempt(attempt, False, None, error[:_MAX_ERROR_CHARS], elapsed, retryable)


def post_once(
    cfg: WebhookConfig, body: bytes, attempt: int, guard: WebhookGuard = DEFAULT_GUARD
) -> Attempt:
    """One blocking POST (runs on the webhook thread pool)."""
    started = time.perf_counter()
    try:
        addresses = guard.resolve(cfg.url)  # None: an allow-listed host, connect as usual
    except WebhookRefused as exc:  # final: asking again gets the same answer
        return _unsent(attempt, str(exc), started, retryable=False)
    except (OSError, UnicodeError) as exc:  # the name does not resolve (now): retried
        return _unsent(attempt, f"{type(exc).__name__}: {exc}", started, retryable=True)
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **cfg.headers}
    if cfg.secret:
        digest = hmac.new(cfg.secret.encode(), body, hashlib.sha256).hexdigest()
        headers["X-Hatidata-Signature"] = "sha256=" + digest
    request = urllib.request.Request(cfg.url, data=body, headers=headers, method="POST")
    if _env_proxy(cfg.url):
        handlers: list[Any] = [urllib.request.ProxyHandler()]  # the proxy connects (and resolves)
    else:
        handlers = [urllib.request.ProxyHandler({})]
        if addresses is not None:
            handlers.append(_PinnedHandler(addresses))
    opener = urllib.request.build_opener(*handlers, _NoRedirect())
    status: int | None = None
    error: str | None = None
    try:
        with opener.open(request, timeout=cfg.timeout) as resp:
            status = resp.status
            resp.read(65536)  # let the server finish; the body itself is not used
    except urllib.error.HTTPError as exc:
        status = exc.code
        error = f"HTTP {exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        error = f"{type(reason).__name__}: {reason}"[:_MAX_ERROR_CHARS]
    elapsed = (time.perf_counter() - started) * 1000.0
    ok = status is not None and 200 <= status < 300
    retryable = not ok and (status is None or status >= 500 or status in _RETRY_STATUS)
    return Attempt(attempt, ok, status, None if ok else error, elapsed, retryable)


async def deliver(
    cfg: WebhookConfig,
    payload: dict[str, Any],
    *,
    executor: Executor,
    backoff: float,
    record: Callable[[Attempt], Awaitable[None]],
    guard: WebhookGuard = DEFAULT_GUARD,
) -> list[Attempt]:
    """POST payload until one attempt succeeds, a final answer comes, or attempts run out.

    `guard` decides which destinations are refused (build it with
    `WebhookGuard.from_config(layer.config)` so this server's ports and the allow-list count).
    """
    body = json.dumps(payload, default=str, ensure_ascii=False).encode()
    loop = asyncio.get_running_loop()
    attempts: list[Attempt] = []
    for n in range(1, cfg.max_attempts + 1):
        result = await loop.run_in_executor(executor, post_once, cfg, body, n, guard)
        attempts.append(result)
        await record(result)
        if result.ok or not result.retryable or n == cfg.max_attempts:
            break
        await asyncio.sleep(backoff * 2 ** (n - 1))
    return attempts
