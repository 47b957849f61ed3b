"""BodyLimit and RateLimit in front of a small Starlette app, under a real uvicorn, over HTTP."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from proxy.api.http.limits import BodyLimit, CallerKey, RateLimit
from tests.conftest import free_port

LIMIT = 1024


async def echo(request: Request) -> Response:
    body = await request.body()
    return JSONResponse({"received": len(body)})


async def streamed(request: Request) -> Response:
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
    return JSONResponse({"received": total})


async def ping(request: Request) -> Response:
    return PlainTextResponse("pong")


async def respond_then_read(scope: Any, receive: Any, send: Any) -> None:
    """Raw ASGI: starts its response before reading the body (the abort case)."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"partial", "more_body": True})
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.body", "body": b"done", "more_body": False})


def make_app() -> Starlette:
    routes = [
        Route("/echo", echo, methods=["POST"]),
        Route("/stream", streamed, methods=["POST"]),
        Route("/ping", ping),
        Route("/health", ping),
        Route("/metrics", ping),
    ]
    app = Starlette(routes=routes)
    app.mount("/early", respond_then_read)
    return app


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def limited() -> Iterator[str]:
    with serve(BodyLimit(make_app(), LIMIT)) as url:
        yield url


def chunks(total: int, size: int = 100) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        part = min(size, total - sent)
        sent += part
        yield b"x" * part


# ---- body size -------------------------------------------------------------------------


def test_content_length_over_the_limit_is_refused_unread(limited: str) -> None:
    r = requests.post(limited + "/echo", data=b"x" * (LIMIT + 1), timeout=10)
    assert r.status_code == 413
    assert r.json() == {
        "error": "payload_too_large",
        "message": f"request body exceeds {LIMIT} bytes",
    }
    # The connection stays usable: the next request on it is answered normally.
    with requests.Session() as s:
        assert s.post(limited + "/echo", data=b"x" * 5000, timeout=10).status_code == 413
        assert s.post(limited + "/echo", data=b"abc", timeout=10).json() == {"received": 3}


def test_exactly_at_the_limit_is_accepted(limited: str) -> None:
    r = requests.post(limited + "/echo", data=b"x" * LIMIT, timeout=10)
    assert r.status_code == 200 and r.json() == {"received": LIMIT}
    r = requests.post(limited + "/stream", data=chunks(LIMIT), timeout=10)
    assert r.request.headers.get("Transfer-Encoding") == "chunked"
    assert r.status_code == 200 and r.json() == {"received": LIMIT}


@pytest.mark.parametrize("path", ["/echo", "/stream"])
def test_chunked_body_over_the_limit_is_refused(limited: str, path: str) -> None:
    r = requests.post(limited + path, data=chunks(LIMIT + 1), timeout=10)
    assert r.request.headers.get("Transfer-Encoding") == "chunked"
    assert "Content-Length" not in r.request.headers
    assert r.status_code == 413  # not the 500 Starlette makes of the exception
    assert r.json()["error"] == "payload_too_large"
    r = requests.post(limited + path, data=chunks(50_000), timeout=10)
    assert r.status_code == 413


def test_over_the_limit_after_the_response_started_aborts(limited: str) -> None:
    with pytest.raises(requests.exceptions.RequestException):
        r = requests.post(limited + "/early/", data=chunks(LIMIT * 4), timeout=10)
        r.content  # noqa: B018 - the body never completes
    r = requests.post(limited + "/early/", data=chunks(LIMIT), timeout=10)
    assert r.status_code == 200 and r.content == b"partialdone"


def test_no_limit_when_max_bytes_is_zero() -> None:
    with serve(BodyLimit(make_app(), 0)) as url:
        r = requests.post(url + "/stream", data=chunks(100_000), timeout=10)
        assert r.json() == {"received": 100_000}


# ---- rate ------------------------------------------------------------------------------


def test_rate_limit_per_caller_with_retry_after() -> None:
    with serve(RateLimit(make_app(), 3)) as url:
        for _ in range(3):
            assert requests.get(url + "/ping", timeout=10).status_code == 200
        r = requests.get(url + "/ping", timeout=10)
        assert r.status_code == 429
        body = r.json()
        assert body["error"] == "rate_limited" and "3 requests per minute" in body["message"]
        # One token per 20 s: the wait is announced in whole seconds, header and body alike.
        assert 1 <= int(r.headers["Retry-After"]) <= 20
        assert body["retry_after"] == int(r.headers["Retry-After"])
        # Exempt paths never count or get refused.
        for _ in range(5):
            assert requests.get(url + "/health", timeout=10).status_code == 200
            assert requests.get(url + "/metrics", timeout=10).status_code == 200

        # Without a resolver nothing is authenticated: any Authorization value is the
        # address's caller, so made-up keys do not buy fresh buckets.
        for key in ("ApiKey one", "ApiKey two"):
            r = requests.get(url + "/ping", headers={"Authorization": key}, timeout=10)
            assert r.status_code == 429


KNOWN = {"ApiKey one": "key-1", "Bearer one": "key-1", "ApiKey two": "key-2"}


async def known_keys(authorization: str) -> str | None:
    return KNOWN.get(authorization)


def test_rate_buckets_by_accepted_key_else_by_address() -> None:
    with serve(RateLimit(make_app(), 3, key=CallerKey(known_keys))) as url:

        def get(auth: str | None = None) -> int:
            headers = {"Authorization": auth} if auth else {}
            return requests.get(url + "/ping", headers=headers, timeout=10).status_code

        # Accepted keys each have a bucket, whichever scheme carries them.
        assert [get("ApiKey one"), get("Bearer one"), get("ApiKey one")] == [200] * 3
        assert get("Bearer one") == 429
        assert [get("ApiKey two") for _ in range(3)] == [200] * 3 and get("ApiKey two") == 429
        # Unknown keys share the address's bucket with keyless calls.
        assert [get("ApiKey junk-1"), get("ApiKey junk-2"), get()] == [200] * 3
        assert get("ApiKey junk-3") == 429 and get() == 429


def test_rate_limit_refills_over_time() -> None:
    clock = [0.0]
    limiter = RateLimit(make_app(), 60, clock=lambda: clock[0])
    assert all(limiter.take("k") == 0 for _ in range(60))
    assert limiter.take("k") == pytest.approx(1.0)  # 1 token per second
    clock[0] += 0.5
    assert limiter.take("k") == pytest.approx(0.5)
    clock[0] += 0.5
    assert limiter.take("k") == 0
    clock[0] += 3600
    assert all(limiter.take("k") == 0 for _ in range(60))  # the bucket holds one minute's worth
    assert limiter.take("k") > 0


def test_rate_limit_memory_is_bounded() -> None:
    limiter = RateLimit(make_app(), 1, max_keys=2)
    for key in ("a", "b", "c"):
        assert limiter.take(key) == 0
    assert list(limiter._buckets) == ["b", "c"]


def test_rate_limit_disabled_at_zero() -> None:
    with serve(RateLimit(make_app(), 0)) as url:
        assert all(requests.get(url + "/ping", timeout=10).status_code == 200 for _ in range(20))


def test_both_together_and_lifespan_passes_through() -> None:
    started: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        started.append("up")
        yield

    app = Starlette(routes=[Route("/echo", echo, methods=["POST"])], lifespan=lifespan)
    with serve(RateLimit(BodyLimit(app, 10), 2)) as url:
        assert started == ["up"]  # the lifespan scope reached the app through both
        assert requests.post(url + "/echo", data=b"0123456789", timeout=10).status_code == 200
        assert requests.post(url + "/echo", data=b"0123456789!", timeout=10).status_code == 413
        assert requests.post(url + "/echo", data=b"", timeout=10).status_code == 429
