"""API keys end to end: `hatiproxy keys` against the running server (its local admin
channel), then the same keys on the wire and MCP at once."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
import requests

from tests.access.keys_cli_support import create, keys_cli, wait_for_channel
from tests.conftest import start_server


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
    server = start_server(tmp, "--embedding-provider", "hash")  # trust mode: no keys yet
    data = server.data_dir
    wait_for_channel(data)
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
    yield server, {name: info["raw_key"] for name, info in made.items()}, made
    server.stop()


def test_cli_lists_keys_without_secrets(keyed) -> None:
    server, _, made = keyed
    listing = keys_cli(server.data_dir, "list", "--json")
    assert listing.returncode == 0, listing.stderr
    listed = {k["key_id"]: k for k in json.loads(listing.stdout)}
    assert made["admin"]["key_id"] in listed and made["org2"]["key_id"] not in listed
    assert all(m["raw_key"] not in listing.stdout for m in made.values())
    assert listed[made["gone"]["key_id"]]["status"] == "revoked"
    assert listed[made["old"]["key_id"]]["status"] == "revoked"  # rotated without grace
    assert made["admin"]["key_prefix"] in listing.stdout
    every = json.loads(keys_cli(server.data_dir, "list", "--json", "--all-orgs").stdout)
    assert made["org2"]["key_id"] in {k["key_id"] for k in every}
    # It says which database it acted on, and how.
    assert f"in database {server.data_dir / 'hatiproxy.duckdb'} via the server on" in (
        listing.stderr
    )
    bad = keys_cli(server.data_dir, "create", "--role", "boss")
    assert bad.returncode == 1 and "role" in bad.stderr and "Traceback" not in bad.stderr


def test_trust_ends_once_keys_exist(keyed) -> None:
    server, secrets, _ = keyed
    with pytest.raises(psycopg.OperationalError, match="password"):
        login(server.port, None)
    with pytest.raises(psycopg.OperationalError, match="28P01|authentication failed"):
        login(server.port, secrets["admin"][:-1] + "x")
    # The server started in trust mode and said what a keyless caller may do; the first
    # key ended it, and the log says so.
    log = server.log()
    assert "TRUST MODE (development only" in log and "keyless caller" in log
    assert "trust mode ended" in log and "keyless clients are now refused" in log


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


def test_wrong_data_dir_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    for args in (("create", "--role", "admin"), ("list",)):
        out = keys_cli(missing, *args)
        assert out.returncode == 1 and "Traceback" not in out.stderr
        assert f"data directory {missing} does not exist" in out.stderr
        assert "--data-dir" in out.stderr
    assert not missing.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    out = keys_cli(empty, "create", "--role", "admin")
    assert out.returncode == 1
    assert f"database {empty / 'hatiproxy.duckdb'} does not exist" in out.stderr
    assert list(empty.iterdir()) == []


def test_admin_channel_is_the_owners_and_a_stale_one_is_detected(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--embedding-provider", "hash")
    try:
        channel = wait_for_channel(server.data_dir)
        path = server.data_dir / "hatiproxy-admin.json"
        assert path.stat().st_mode & 0o777 == 0o600
        assert channel.url.startswith("http://127.0.0.1:") and channel.pid == server.proc.pid
        url = channel.url + "/v1/admin/server"
        assert requests.get(url, timeout=10).status_code == 401
        wrong = {"Authorization": "Bearer " + channel.token[:-1] + "x"}
        assert requests.get(url, headers=wrong, timeout=10).status_code == 401
        info = requests.get(url, headers={"Authorization": f"Bearer {channel.token}"}, timeout=10)
        assert info.json()["database"] == str(server.data_dir / "hatiproxy.duckdb")
        # The public REST port has no admin routes, whoever asks.
        public = requests.get(f"{server.rest_url}/v1/admin/server", timeout=10)
        assert public.status_code in (401, 404)
    finally:
        server.proc.kill()  # as a crash would: the channel file stays behind
        server.proc.wait(10)
    assert path.exists()
    made = keys_cli(server.data_dir, "create", "--json", "--role", "admin", "--agent", "ops")
    assert made.returncode == 0, made.stderr
    assert "stale admin channel file" in made.stderr and "opened directly" in made.stderr
    assert not path.exists()
    key = json.loads(made.stdout)["raw_key"]
    again = start_server(tmp_path, "--embedding-provider", "hash")
    try:
        with login(again.port, key) as conn:
            assert conn.execute("SELECT agent_id FROM whoami()").fetchone() == ("ops",)
        wait_for_channel(again.data_dir)
        listing = keys_cli(again.data_dir, "list")
        assert listing.returncode == 0 and "via the server on" in listing.stderr
    finally:
        again.stop()


def test_first_key_over_rest_ends_trust_mode_and_says_so(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--embedding-provider", "hash", "--database", ":memory:")
    try:
        base = f"{server.rest_url}/v1/organizations/local"
        made = requests.post(f"{base}/api-keys", json={"role": "admin"}, timeout=30)
        assert made.status_code == 201, made.text
        key = made.json()["raw_key"]
        log = server.log()
        assert "trust mode ended" in log and made.json()["key_prefix"] in log
        assert requests.get(f"{base}/api-keys", timeout=30).status_code == 401
        with pytest.raises(psycopg.OperationalError, match="password"):
            login(server.port, None)
        headers = {"Authorization": f"ApiKey {key}"}
        assert requests.get(f"{base}/api-keys", headers=headers, timeout=30).status_code == 200
    finally:
        server.stop()
