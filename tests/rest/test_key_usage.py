"""Per-key usage over REST: requests by interface, queries, branch work and last use are
counted in memory, answered including what is not flushed, and kept across a restart."""

from __future__ import annotations

import psycopg
import requests
from hatidata_agent.control_plane import ControlPlaneClient

from tests.conftest import start_server
from tests.rest.rest_support import KeyedServer, KeySpec, keyed_server

SPECS = {
    "admin": KeySpec("admin"),
    "bot": KeySpec("agent", agent_id="bot"),
    "bot2": KeySpec("agent", agent_id="bot2"),
    "analyst": KeySpec("analyst"),
    "other": KeySpec("admin", org_id="org2"),
}
BASE = "/v1/organizations/local"
NO_FLUSH = ("--access-tracker-flush-interval-secs", "3600")  # only the stop flushes


def key_ids(ks: KeyedServer) -> dict[str, str]:
    listed = ks.request("GET", f"{BASE}/agent-keys", key="admin").json()
    listed += ks.request("GET", f"{BASE}/api-keys", key="admin").json()
    return {
        name: next(k["id"] for k in listed if secret.startswith(k["key_prefix"]))
        for name, secret in ks.secrets.items()
        if name != "other"
    }


def use_bot(ks: KeyedServer) -> None:
    dsn = f"host=127.0.0.1 port={ks.server.port} user=bot dbname=hatidata"
    with psycopg.connect(dsn, password=ks.secrets["bot"], autocommit=True) as con:
        for sql in ("SELECT 1", "SELECT 2", "CREATE TABLE IF NOT EXISTS t (a INT)"):
            con.execute(sql)
        bid = con.execute("SELECT branch_id FROM branch_create()").fetchone()[0]
        con.execute("SELECT * FROM branch_query(%s, 'INSERT INTO t VALUES (1)')", [bid])
        con.execute("SELECT * FROM branch_merge(%s)", [bid])
    for _ in range(2):
        assert ks.request("GET", "/v1/cot/sessions", key="bot").status_code == 200
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    rpc["params"] = {"name": "query", "arguments": {"sql": "SELECT 42 AS x"}}
    r = requests.post(ks.server.mcp_url, json=rpc, headers=ks.headers("bot"), timeout=30)
    assert r.status_code == 200 and not r.json()["result"].get("isError"), r.text


def test_usage_counts_flush_at_stop_and_survive_a_restart(tmp_path) -> None:
    ks = keyed_server(tmp_path, SPECS, *NO_FLUSH)
    try:
        ids = key_ids(ks)
        use_bot(ks)
        cp = ControlPlaneClient(base_url=ks.url, api_key=ks.secrets["admin"], org_id="local")
        usage = cp.get_agent_key_usage(ids["bot"])
        assert usage["requests_by_interface"] == {"wire": 1, "rest": 2, "mcp": 1}
        assert usage["total_requests"] == 4 and usage["key_id"] == ids["bot"]
        # 3 statements on the wire, 3 agent-function statements, 1 in the branch, 1 via MCP.
        assert usage["total_queries"] == 8, usage
        assert usage["last_used_at"] and usage["first_used_at"] and usage["agent_id"] == "bot"
        assert usage["total_credits"] is None and usage["status"] == "active"
        branch = cp.get_agent_key_branch_usage(ids["bot"])
        assert (branch["branches_created"], branch["branches_merged"]) == (1, 1)
        assert branch["queries_in_branches"] == 1 and branch["branches_discarded"] == 0
        # Unflushed last use shows in the key listing too.
        listed = {k["id"]: k for k in cp.list_agent_keys()}
        assert listed[ids["bot"]]["last_used_at"] is not None
        assert listed[ids["bot2"]]["last_used_at"] is None
        idle = cp.get_agent_key_usage(ids["bot2"])
        assert idle["total_requests"] == 0 and idle["last_used_at"] is None
    finally:
        ks.server.stop()  # flushes the counts
    server = start_server(tmp_path, "--embedding-provider", "hash", *NO_FLUSH)
    try:
        ks = KeyedServer(server, ks.secrets)
        again = ks.request("GET", f"{BASE}/agent-keys/{ids['bot']}/usage", key="admin").json()
        assert again["requests_by_interface"] == usage["requests_by_interface"]
        assert again["total_queries"] == usage["total_queries"]
        assert again["last_used_at"] == usage["last_used_at"]
        org = ks.request("GET", f"{BASE}/api-keys/{ids['admin']}/usage", key="admin").json()
        assert org["requests_by_interface"]["rest"] >= 5 and org["agent_id"] is None
    finally:
        server.stop()


def test_usage_routes_follow_the_key_rules(tmp_path) -> None:
    ks = keyed_server(tmp_path, SPECS)
    try:
        ids = key_ids(ks)
        for path in ("usage", "branch-usage"):
            url = f"{BASE}/agent-keys/{ids['bot']}/{path}"
            assert ks.request("GET", url, key="admin").status_code == 200
            assert ks.request("GET", url, key="analyst").status_code == 403  # no keys:manage
            assert ks.request("GET", url, key="bot").status_code == 403
            other = f"/v1/organizations/org2/agent-keys/{ids['bot']}/{path}"
            assert ks.request("GET", other, key="other").status_code == 404
            # An organisation key is not an agent key; unknown ids are not found.
            org_key = f"{BASE}/agent-keys/{ids['analyst']}/{path}"
            assert ks.request("GET", org_key, key="admin").status_code == 404
            missing = f"{BASE}/agent-keys/00000000-0000-0000-0000-000000000000/{path}"
            assert ks.request("GET", missing, key="admin").status_code == 404
        r = ks.request("GET", f"{BASE}/api-keys/{ids['bot']}/usage", key="admin")
        assert r.status_code == 404 and r.json()["error"] == "not_found"
    finally:
        ks.server.stop()
