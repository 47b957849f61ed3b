"""Failed logins are counted per source address across the wire, REST and MCP:
repeated failures are answered ever more slowly, then the address is refused."""

from __future__ import annotations

import time

import psycopg
import pytest
import requests

from tests.rest.rest_support import KeySpec, keyed_server

ARGS = ("--auth-failure-limit", "1", "--auth-ban-seconds", "60")


def wire_login(port: int, password: str) -> None:
    psycopg.connect(host="127.0.0.1", port=port, user="x", password=password, dbname="x").close()


def test_wire_failures_slow_then_ban_every_interface(tmp_path) -> None:
    ks = keyed_server(tmp_path, {"good": KeySpec("admin")}, *ARGS)
    try:
        elapsed = []
        for _ in range(4):  # limit 1: delays 0.25, 0.5, 1 s, then the ban (4 x limit)
            start = time.monotonic()
            with pytest.raises(psycopg.OperationalError, match="authentication failed"):
                wire_login(ks.server.port, "hd_live_wrong")
            elapsed.append(time.monotonic() - start)
        assert elapsed[2] >= 0.9 and elapsed[2] > elapsed[0], elapsed
        # Banned: even the right key is refused, on every interface, before any check.
        with pytest.raises(psycopg.OperationalError, match="too many failed"):
            wire_login(ks.server.port, ks.secrets["good"])
        r = ks.request("GET", "/metrics", key="good")
        assert r.status_code == 429 and r.json()["error"] == "too_many_auth_failures"
        assert int(r.headers["Retry-After"]) > 0
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        mcp = requests.post(ks.server.mcp_url, json=body, headers=ks.headers("good"), timeout=10)
        assert mcp.status_code == 429
        # /health needs no credentials and stays up.
        assert ks.request("GET", "/health").status_code == 200
    finally:
        ks.server.stop()


def test_rest_failures_count_on_the_wire(tmp_path) -> None:
    ks = keyed_server(tmp_path, {"good": KeySpec("admin")}, *ARGS)
    try:
        wrong = {"Authorization": "ApiKey hd_live_guess"}
        statuses = [ks.request("GET", "/metrics", headers=wrong).status_code for _ in range(4)]
        assert statuses == [401, 401, 401, 401]
        assert ks.request("GET", "/metrics", headers=wrong).status_code == 429
        with pytest.raises(psycopg.OperationalError, match="too many failed"):
            wire_login(ks.server.port, ks.secrets["good"])
    finally:
        ks.server.stop()


def test_valid_keys_are_never_slowed(tmp_path) -> None:
    ks = keyed_server(tmp_path, {"good": KeySpec("admin")}, *ARGS)
    try:
        start = time.monotonic()
        for _ in range(10):
            wire_login(ks.server.port, ks.secrets["good"])
            assert ks.request("GET", "/metrics", key="good").status_code != 401
        assert time.monotonic() - start < 10
    finally:
        ks.server.stop()
