"""Every refused login is logged at WARNING (user, source address, reason), never with the
password or key that was tried: on the wire, and for REST and MCP over HTTP."""

from __future__ import annotations

import time

import psycopg
import pytest
import requests

from tests.rest.rest_support import KeySpec, keyed_server


def wire_login(port: int, user: str, password: str) -> None:
    psycopg.connect(
        host="127.0.0.1", port=port, user=user, password=password, dbname="hatidata"
    ).close()


def warnings_of(log: str, needle: str) -> list[str]:
    return [line for line in log.splitlines() if " WARNING " in line and needle in line]


def wait_for(srv, needle: str, count: int) -> list[str]:
    deadline = time.monotonic() + 10
    while True:
        lines = warnings_of(srv.log(), needle)
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def test_failed_logins_are_logged_without_the_secret(tmp_path) -> None:
    ks = keyed_server(tmp_path, {"good": KeySpec("admin")}, "--users", "alice:right-pass-1")
    srv = ks.server
    try:
        # a configured user's wrong password (SCRAM)
        with pytest.raises(psycopg.OperationalError, match="authentication failed"):
            wire_login(srv.port, "alice", "wrong-pass-2")
        # not a configured user: the password is tried as an API key
        with pytest.raises(psycopg.OperationalError, match="authentication failed"):
            wire_login(srv.port, "mallory", "hd_live_guessed-key-3")
        # the good key still logs in, and is not logged as a failure
        wire_login(srv.port, "bob", ks.secrets["good"])
        wire = wait_for(srv, "failed login on the wire", 2)
        assert len(wire) == 2, srv.log()
        assert "user 'alice' from 127.0.0.1: wrong password (scram-sha-256)" in wire[0]
        assert "user 'mallory' from 127.0.0.1:" in wire[1] and "unknown API key" in wire[1]

        # REST and MCP with a bad key, and MCP without any credentials
        bad = {"Authorization": "ApiKey hd_live_guessed-key-4"}
        assert requests.get(f"{srv.rest_url}/metrics", headers=bad, timeout=10).status_code == 401
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        mcp = requests.post(srv.mcp_url, json=body, headers=bad, timeout=10)
        assert mcp.status_code == 401
        assert requests.post(srv.mcp_url, json=body, timeout=10).status_code == 401
        rest = wait_for(srv, "failed rest authentication from 127.0.0.1", 1)
        assert len(rest) == 1 and "unknown API key" in rest[0], srv.log()
        mcp_lines = wait_for(srv, "failed mcp authentication from 127.0.0.1", 2)
        assert len(mcp_lines) == 2, srv.log()
        assert "unknown API key" in mcp_lines[0] and "missing credentials" in mcp_lines[1]

        log = srv.log()
        for secret in ("right-pass-1", "wrong-pass-2", "guessed-key-3", "guessed-key-4"):
            assert secret not in log
        assert ks.secrets["good"] not in log
        assert not warnings_of(log, "'bob'")
    finally:
        srv.stop()
