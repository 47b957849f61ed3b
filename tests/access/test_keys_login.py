"""API keys end to end: `hatiproxy keys` on the file, then the same key on the wire and MCP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import requests

from tests.conftest import ROOT, start_server


def keys_cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "proxy", "keys", *args, "--data-dir", str(data_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def create(data_dir: Path, *args: str) -> dict:
    out = keys_cli(data_dir, "create", "--json", *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def login(port: int, password: str | None, user: str = "someone", **kw: str):
    return psycopg.connect(
        host="127.0.0.1", port=port, user=user, password=password, dbname="hatidata", **kw
    )


def mcp_call(url: str, key: str | None, tool: str, args: dict, agent: str | None = None):
    headers = {"Authorization": f"ApiKey {key}"} if key else {}
    if agent:
        headers["X-Hatidata-Agent-Id"] = agent
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    }
    return requests.post(url, json=body, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("keys")
    data = tmp / "data"
    made = {
        "admin": create(data, "--role", "admin"),
        "bot": create(data, "--role", "agent", "--agent", "bot"),
        "ro": create(data, "--role", "analyst"),
        "org2": create(data, "--role", "admin", "--org", "org2"),
        "gone": create(data, "--role", "agent"),
        "old": create(data, "--role", "agent", "--agent", "rotor"),
    }
    assert keys_cli(data, "revoke", made["gone"]["id"]).returncode == 0
    rotated = keys_cli(data, "rotate", made["old"]["id"], "--json")
    assert rotated.returncode == 0, rotated.stderr
    made["new"] = json.loads(rotated.stdout)
    server = start_server(tmp, "--embedding-provider", "hash")
    yield server, {name: info["key"] for name, info in made.items()}, made
    server.stop()


def test_cli_lists_keys_without_secrets(tmp_path: Path) -> None:
    made = create(tmp_path, "--role", "auditor", "--name", "audit-bot")
    assert made["key"].startswith("hd_live_") and made["role"] == "auditor"
    listing = keys_cli(tmp_path, "list", "--json")
    assert listing.returncode == 0
    assert made["key"] not in listing.stdout and made["key_prefix"] in listing.stdout
    bad = keys_cli(tmp_path, "create", "--role", "boss")
    assert bad.returncode == 1 and "unknown role" in bad.stderr


def test_trust_ends_once_keys_exist(keyed) -> None:
    server, secrets, _ = keyed
    with pytest.raises(psycopg.OperationalError, match="password"):
        login(server.port, None)
    with pytest.raises(psycopg.OperationalError, match="28P01|authentication failed"):
        login(server.port, secrets["admin"][:-1] + "x")
    assert "TRUST MODE" not in server.log()


def test_agent_key_binds_the_session(keyed) -> None:
    server, secrets, _ = keyed
    with login(server.port, secrets["bot"]) as conn:
        row = conn.execute("SELECT * FROM store_memory('bot remembers the wire')").fetchone()
        assert row is not None
        agents = conn.execute("SELECT DISTINCT agent_id FROM list_memories()").fetchall()
        assert agents == [("bot",)]
    # Asking for another agent with an agent-bound key is refused at login.
    with pytest.raises(psycopg.OperationalError, match="bound to agent 'bot'"):
        login(server.port, secrets["bot"], options="-c hatidata_agent_id=mallory")


def test_revoked_and_rotated_keys(keyed) -> None:
    server, secrets, _ = keyed
    for name in ("gone", "old"):
        with pytest.raises(psycopg.OperationalError, match="authentication failed"):
            login(server.port, secrets[name])
    with login(server.port, secrets["new"]) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        # The rotated key still acts as its agent.
        conn.execute("SELECT * FROM set_agent_state('rotated', 'true')")
        who = conn.execute("SELECT agent_id FROM _hatidata_agent_state").fetchone()
        assert who == ("rotor",)


def test_org_key_sees_only_its_org(keyed) -> None:
    server, secrets, _ = keyed
    with login(server.port, secrets["admin"], options="-c hatidata_agent_id=shared") as conn:
        conn.execute("SELECT * FROM store_memory('org one secret plan')").fetchall()
    with login(server.port, secrets["org2"], options="-c hatidata_agent_id=shared") as conn:
        assert conn.execute("SELECT * FROM list_memories()").fetchall() == []
        assert conn.execute("SELECT count(*) FROM _hatidata_agent_memory").fetchone() == (0,)


def test_mcp_http_uses_the_same_keys(keyed) -> None:
    server, secrets, _ = keyed
    assert mcp_call(server.mcp_url, None, "list_schemas", {}).status_code == 401
    assert mcp_call(server.mcp_url, "hd_live_nope", "list_schemas", {}).status_code == 401
    assert mcp_call(server.mcp_url, secrets["gone"], "list_schemas", {}).status_code == 401
    # Read-only analyst: reads work, writes are 403 before anything runs.
    ok = mcp_call(server.mcp_url, secrets["ro"], "search_memory", {"query": "plan"})
    assert ok.status_code == 200 and "error" not in ok.json()
    denied = mcp_call(server.mcp_url, secrets["ro"], "store_memory", {"content": "x"})
    assert denied.status_code == 403 and denied.json()["error"]["data"]["code"] == "forbidden"
    # An agent key acts only as its agent, whatever header is sent.
    stored = mcp_call(server.mcp_url, secrets["bot"], "store_memory", {"content": "via mcp"})
    assert stored.status_code == 200, stored.text
    spoof = mcp_call(server.mcp_url, secrets["bot"], "list_schemas", {}, agent="mallory")
    assert spoof.status_code == 403
    # Another org's admin finds nothing of org one.
    found = mcp_call(server.mcp_url, secrets["org2"], "search_memory", {"query": "secret plan"})
    text = found.json()["result"]["content"][0]["text"]
    assert "secret plan" not in text
