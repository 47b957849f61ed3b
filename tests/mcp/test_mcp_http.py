"""MCP over HTTP against a real server process: exactly what the public client sends.

`POST /mcp` with no initialize, no session header, `Accept: */*`, a plain JSON answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from mcp_support import (
    ALL_TOOLS,
    HttpAgent,
    error_text,
    http_post,
    result_data,
    rpc,
    start_mcp_server,
    tool_call,
)

from tests.conftest import ServerProcess


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_mcp_server(tmp_path_factory.mktemp("mcp_http"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_mcp_server(tmp_path_factory.mktemp("mcp_keys"), "--users", "u1:sekrit-1")
    yield server
    server.stop()


def test_tools_call_without_initialize_is_plain_json(srv: ServerProcess) -> None:
    status, headers, body = http_post(
        srv.mcp_url, tool_call("query", {"sql": "SELECT 41 + 1 AS n"})
    )
    assert status == 200
    assert headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in headers
    assert body["jsonrpc"] == "2.0" and body["id"] is not None
    assert result_data(body["result"]) == [{"n": 42}]


def test_no_accept_header_counts_as_any(srv: ServerProcess) -> None:
    import json
    import urllib.request

    req = urllib.request.Request(  # urllib sends no Accept header at all
        srv.mcp_url, data=json.dumps(rpc("tools/list")).encode(), method="POST"
    )
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.status == 200
        assert len(json.loads(resp.read())["result"]["tools"]) == len(ALL_TOOLS)


def test_tools_list_has_the_compat_tools_and_our_own(srv: ServerProcess) -> None:
    status, _, body = http_post(srv.mcp_url, rpc("tools/list"))
    assert status == 200
    tools = {t["name"]: t for t in body["result"]["tools"]}
    assert set(tools) == set(ALL_TOOLS)
    for name, required in ALL_TOOLS.items():
        schema = tools[name]["inputSchema"]
        assert schema["type"] == "object"
        assert set(schema.get("required", [])) == required, name
    props = tools["store_memory"]["inputSchema"]["properties"]
    assert props["memory_type"]["default"] == "fact" and props["importance"]["default"] == 0.5
    assert tools["search_memory"]["inputSchema"]["properties"]["top_k"]["default"] == 10
    assert tools["branch_create"]["inputSchema"]["properties"]["ttl_seconds"]["default"] == 3600


def test_initialize_and_notifications(srv: ServerProcess) -> None:
    init = rpc(
        "initialize",
        {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    status, _, body = http_post(srv.mcp_url, init)
    assert status == 200 and body["result"]["serverInfo"]["name"] == "hatiproxy"
    assert "tools" in body["result"]["capabilities"]
    status, _, body = http_post(
        srv.mcp_url, {"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert status == 202 and body is None


def test_bad_input(srv: ServerProcess) -> None:
    status, _, body = http_post(srv.mcp_url, b"{not json")
    assert status == 400 and body["error"]["code"] == -32700
    status, _, body = http_post(srv.mcp_url, [rpc("tools/list")])
    assert status == 400 and body["error"]["code"] == -32600
    agent = HttpAgent(srv)
    assert "unknown tool" in error_text(agent.call("no_such_tool"))
    assert "missing required argument 'content'" in error_text(agent.call("store_memory"))
    assert "must be a JSON integer" in error_text(
        agent.call("search_memory", {"query": "x", "top_k": "many"})
    )
    assert "between" in error_text(agent.call("store_memory", {"content": "x", "importance": 7}))
    assert "unknown argument" in error_text(agent.call("query", {"sql": "SELECT 1", "sqll": 2}))
    status, _, body = agent.send(rpc("no/such/method"))
    assert body["error"]["code"] == -32601


def test_query_and_read_query(srv: ServerProcess) -> None:
    agent = HttpAgent(srv)
    agent.data("query", {"sql": "CREATE TABLE http_items (id INTEGER, name TEXT)"})
    agent.data("query", {"sql": "INSERT INTO http_items VALUES (1, 'a'), (2, 'b')"})
    rows = agent.data("read_query", {"sql": "SELECT * FROM http_items ORDER BY id"})
    assert rows == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    refused = agent.call("read_query", {"sql": "INSERT INTO http_items VALUES (3, 'c')"})
    assert "25006" in error_text(refused)
    assert agent.data("read_query", {"sql": "SELECT count(*) AS n FROM http_items"}) == [{"n": 2}]
    err = agent.call("query", {"sql": "SELECT * FROM no_such_table"})
    assert "42P01" in error_text(err)
    assert err["structuredContent"]["sqlstate"] == "42P01"


def test_catalog_tools(srv: ServerProcess) -> None:
    agent = HttpAgent(srv)
    agent.data("query", {"sql": "CREATE TABLE IF NOT EXISTS cat_t (k INTEGER NOT NULL, v TEXT)"})
    assert "public" in agent.data("list_schemas")
    names = {(t["table_schema"], t["table_name"]) for t in agent.data("list_tables")}
    assert ("public", "cat_t") in names
    assert all(s != "hatidata_internal" for s, _ in names)
    assert any(t["table_name"] == "cat_t" for t in agent.data("list_tables", {"schema": "main"}))
    cols = agent.data("describe_table", {"table_name": "cat_t"})
    assert [(c["column_name"], c["is_nullable"]) for c in cols] == [("k", "NO"), ("v", "YES")]
    agent.data("query", {"sql": "CREATE TABLE IF NOT EXISTS cat_v (id INT, e vector(3))"})
    typed = {c["column_name"]: c["data_type"] for c in agent.data("describe_table", {
        "table_name": "cat_v"})}  # fmt: skip
    assert typed == {"id": "integer", "e": "vector"}  # pgvector's type, by name
    assert "does not exist" in error_text(agent.call("describe_table", {"table_name": "nope"}))
    # readable by name though not listed (like Postgres' system catalogs)
    state_cols = agent.data("describe_table", {"table_name": "_hatidata_agent_state"})
    assert {"key", "value"} <= {c["column_name"] for c in state_cols}
    # Agent tables are in the agent database, which SQL cannot reach: no such table here.
    hidden = agent.call("describe_table", {"table_name": "hatidata_internal.agent_state"})
    assert "does not exist" in error_text(hidden)
    stats = agent.data("get_usage_stats")
    assert any(s["table_name"] == "cat_t" and s["column_count"] == 2 for s in stats)


def test_auth_with_users_configured(keyed: ServerProcess) -> None:
    call = tool_call("query", {"sql": "SELECT 1 AS one"})
    status, headers, body = http_post(keyed.mcp_url, call)
    assert status == 401 and body["error"]["code"] == -32001
    status, _, body = http_post(keyed.mcp_url, call, {"Authorization": "ApiKey wrong"})
    assert status == 401
    status, _, body = http_post(keyed.mcp_url, call, {"Authorization": "ApiKey sekrit-1"})
    assert status == 200 and result_data(body["result"]) == [{"one": 1}]

    # A configured user is the agent of its user name, unless it names one (the same rule
    # as over the wire: proxy/access/agent_rule.py); only agent keys are bound.
    def agent_of(agent: HttpAgent) -> str:
        key = f"k{uuid.uuid4().hex[:8]}"
        agent.data("set_agent_state", {"key": key, "value": 1})
        sql = f"SELECT agent_id FROM _hatidata_agent_state WHERE key = '{key}'"
        return agent.data("query", {"sql": sql})[0]["agent_id"]

    assert agent_of(HttpAgent(keyed, None, Authorization="ApiKey sekrit-1")) == "u1"
    assert agent_of(HttpAgent(keyed, "helper", Authorization="ApiKey sekrit-1")) == "helper"


# ---------------------------------------------------------------- agent tools


def test_state_is_per_agent(srv: ServerProcess) -> None:
    a1, a2 = HttpAgent(srv, "h-a1"), HttpAgent(srv, "h-a2")
    assert a1.data("set_agent_state", {"key": "plan", "value": {"step": 3}})["status"] == "ok"
    assert a1.data("get_agent_state", {"key": "plan"})["value"] == {"step": 3}
    assert a1.data("set_agent_state", {"key": "s", "value": "text"})["key"] == "s"
    assert a1.data("get_agent_state", {"key": "s"})["value"] == "text"
    other = a2.data("get_agent_state", {"key": "plan"})
    assert other["key"] == "plan" and other["value"] is None


def test_memory_is_per_agent(srv: ServerProcess) -> None:
    a1, a2 = HttpAgent(srv, "h-m1"), HttpAgent(srv, "h-m2")
    stored = a1.data("store_memory", {"content": "The Q3 revenue grew 12 percent in EMEA"})
    memory_id = stored["memory_id"]
    uuid.UUID(str(memory_id))
    hits = a1.data("search_memory", {"query": "Q3 revenue EMEA"})
    assert isinstance(hits, list) and any(h["memory_id"] == memory_id for h in hits)
    assert not any(
        h["memory_id"] == memory_id for h in a2.data("search_memory", {"query": "Q3 revenue EMEA"})
    )
    denied = a2.call("delete_memory", {"memory_id": memory_id})
    assert denied.get("isError") or result_data(denied)["deleted"] is False
    assert any(h["memory_id"] == memory_id for h in a1.data("search_memory", {"query": "revenue"}))
    gone = a1.data("delete_memory", {"memory_id": memory_id})
    assert gone == gone | {"deleted": True, "memory_id": memory_id}


def test_reasoning_ledger(srv: ServerProcess) -> None:
    a1, a2 = HttpAgent(srv, "h-c1"), HttpAgent(srv, "h-c2")
    session = f"s-{uuid.uuid4().hex[:8]}"
    first = a1.data("log_reasoning_step", {"session_id": session, "content": "look at sales"})
    assert first["session_id"] == session and first["trace_id"]
    a1.data(
        "log_reasoning_step", {"session_id": session, "content": "buy", "step_type": "decision"}
    )
    replay = a1.data("replay_decision", {"session_id": session, "verify_chain": True})
    assert replay["session_id"] == session and replay["step_count"] == 2
    assert replay["chain_valid"] is True and len(replay["steps"]) == 2
    assert a1.data("replay_decision", {"session_id": session})["chain_valid"] is None
    assert any(s["session_id"] == session for s in a1.data("get_session_history"))
    other = a2.call("replay_decision", {"session_id": session})
    assert other.get("isError") or result_data(other)["step_count"] == 0
    bad = a1.call("log_reasoning_step", {"session_id": session, "content": "x", "step_type": "nap"})
    assert "step_type" in error_text(bad)


def test_triggers(srv: ServerProcess) -> None:
    agent = HttpAgent(srv, "h-t1")
    made = agent.data("register_trigger", {"name": "churn", "concept": "customer wants to cancel"})
    trigger_id = made["trigger_id"]
    assert any(t["trigger_id"] == trigger_id for t in agent.data("list_triggers"))
    tested = agent.data(
        "test_trigger", {"trigger_id": trigger_id, "content": "customer wants to cancel"}
    )
    assert {"matched", "score", "threshold", "trigger_name"} <= set(tested)
    assert tested["trigger_name"] == "churn" and tested["threshold"] == pytest.approx(0.7)
    deleted = agent.data("delete_trigger", {"trigger_id": trigger_id})
    assert deleted["deleted"] is True and deleted["trigger_id"] == trigger_id


def test_branches(srv: ServerProcess) -> None:
    agent = HttpAgent(srv, "h-b1")
    agent.data("query", {"sql": "CREATE TABLE br_items (id INTEGER, v TEXT)"})
    agent.data("query", {"sql": "INSERT INTO br_items VALUES (1, 'main')"})
    branch = agent.data("branch_create", {"name": "try", "ttl_seconds": 600})
    bid = branch["branch_id"]
    agent.data("branch_query", {"branch_id": bid, "sql": "INSERT INTO br_items VALUES (2, 'b')"})
    rows = agent.data(
        "branch_query", {"branch_id": bid, "sql": "SELECT id FROM br_items ORDER BY id"}
    )
    assert rows == [{"id": 1}, {"id": 2}]
    assert agent.data("query", {"sql": "SELECT count(*) AS n FROM br_items"}) == [{"n": 1}]
    assert any(b["branch_id"] == bid for b in agent.data("branch_list"))
    other = HttpAgent(srv, "h-b2").call("branch_query", {"branch_id": bid, "sql": "SELECT 1"})
    assert other.get("isError")
    merged = agent.data("branch_merge", {"branch_id": bid})
    assert merged["branch_id"] == bid and merged["strategy"] == "branch_wins"
    assert agent.data("query", {"sql": "SELECT count(*) AS n FROM br_items"}) == [{"n": 2}]
    scratch = agent.data("branch_create", {"name": "scratch"})["branch_id"]
    dropped = agent.data("branch_discard", {"branch_id": scratch})
    assert dropped["discarded"] is True and dropped["branch_id"] == scratch


def test_branches_and_triggers_by_name(srv: ServerProcess) -> None:
    """Tools taking a branch_id or trigger_id take the name too (the same functions as SQL)."""
    agent = HttpAgent(srv, "h-names")
    tools = {t["name"]: t for t in agent.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})[
        2]["result"]["tools"]}  # fmt: skip
    for tool, arg in [("branch_query", "branch_id"), ("delete_trigger", "trigger_id")]:
        described = tools[tool]["inputSchema"]["properties"][arg]
        assert described["type"] == "string" and "name" in described["description"], described
    agent.data("query", {"sql": "CREATE TABLE bn_items (id INTEGER)"})
    bid = agent.data("branch_create", {"name": "what-if"})["branch_id"]
    agent.data("branch_query", {"branch_id": "what-if", "sql": "INSERT INTO bn_items VALUES (7)"})
    rows = agent.data("branch_query", {"branch_id": "what-if", "sql": "SELECT id FROM bn_items"})
    assert rows == [{"id": 7}]
    other = HttpAgent(srv, "h-names-2").call(
        "branch_query", {"branch_id": "what-if", "sql": "SELECT 1"}
    )
    assert other["structuredContent"]["code"] == "not_found"
    twin = agent.data("branch_create", {"name": "what-if"})["branch_id"]
    ambiguous = agent.call("branch_merge", {"branch_id": "what-if"})
    assert ambiguous["structuredContent"]["code"] == "invalid_argument"
    assert bid in error_text(ambiguous) and twin in error_text(ambiguous)
    assert agent.data("branch_discard", {"branch_id": twin})["branch_id"] == twin
    merged = agent.data("branch_merge", {"branch_id": "what-if"})
    assert merged["branch_id"] == bid and merged["status"] == "merged"

    made = agent.data("register_trigger", {"name": "churn-watch", "concept": "cancel my plan"})
    tested = agent.data("test_trigger", {"trigger_id": "churn-watch", "content": "cancel my plan"})
    assert tested["trigger_id"] == made["trigger_id"] and tested["matched"] is True
    deleted = agent.data("delete_trigger", {"trigger_id": "churn-watch"})
    assert deleted["trigger_id"] == made["trigger_id"] and deleted["deleted"] is True
    gone = agent.call("delete_trigger", {"trigger_id": "churn-watch"})
    assert gone["structuredContent"]["code"] == "not_found"


def test_official_mcp_client_over_http(srv: ServerProcess) -> None:
    import anyio
    from mcp import Client

    async def scenario() -> None:
        async with Client(srv.mcp_url) as client:  # initialize, then calls, as SDKs do
            assert len((await client.list_tools()).tools) == len(ALL_TOOLS)
            result = await client.call_tool("query", {"sql": "SELECT 3 AS x"})
            assert not result.is_error and result.content[0].text == '[{"x": 3}]'

    anyio.run(scenario)


def test_memory_bad_input(srv: ServerProcess) -> None:
    agent = HttpAgent(srv, "h-bad")
    huge = agent.call("store_memory", {"content": "x" * (10 * 1024 * 1024)})
    assert huge["isError"] is True and huge["structuredContent"]["code"] == "invalid_argument"
    missing = agent.call("delete_memory", {"memory_id": str(uuid.uuid4())})
    assert missing.get("isError") or result_data(missing)["deleted"] is False
    not_uuid = agent.call("delete_memory", {"memory_id": "not-a-uuid"})
    assert "UUID" in error_text(not_uuid) or "uuid" in error_text(not_uuid)
    assert "JSON object" in error_text(
        agent.call("store_memory", {"content": "x", "metadata": "{"})
    )
    assert agent.data("search_memory", {"query": "nothing stored here"}) == []


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_missing_or_wrong_content_type_is_a_json_rpc_error(
    srv: ServerProcess, content_type: str | None
) -> None:
    import http.client
    import json

    conn = http.client.HTTPConnection(srv.host, srv.mcp_port, timeout=30)
    try:
        headers = {"Accept": "*/*"} | ({"Content-Type": content_type} if content_type else {})
        conn.request("POST", "/mcp", body=json.dumps(rpc("tools/list")).encode(), headers=headers)
        resp = conn.getresponse()
        status, ctype, raw = resp.status, resp.getheader("content-type"), resp.read()
    finally:
        conn.close()
    assert status == 400
    assert ctype == "application/json"
    body = json.loads(raw)
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32600
    message = body["error"]["message"]
    assert message.startswith("Content-Type must be application/json")
    assert (repr(content_type) if content_type else "none was sent") in message
    # the right type still works on the same server
    status, _, ok = http_post(srv.mcp_url, rpc("tools/list"), {"Content-Type": "application/json"})
    assert status == 200 and "result" in ok


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,  # deeper than Python's parser stack
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,  # complete, valid JSON, too deep
        b"[" * 500 + b"]" * 500,  # parses; the transport refuses it
    ],
    ids=["100k-open-brackets", "100k-objects", "500-arrays"],
)
def test_deeply_nested_body_is_a_json_rpc_error_not_a_500(srv: ServerProcess, body: bytes) -> None:
    status, headers, answer = http_post(srv.mcp_url, body)
    assert status == 400, (status, answer)
    assert headers["content-type"].startswith("application/json")
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] in (-32700, -32600), answer
    # The server is still serving.
    assert http_post(srv.mcp_url, rpc("tools/list"))[0] == 200


def test_query_refuses_statements_only_the_wire_server_carries_out(srv: ServerProcess) -> None:
    """A materialized view (its registry, REFRESH's re-run) and CREATE TABLE LIKE are the
    wire server's: over MCP they are refused, not run as a plain table (or an emptied one)."""
    agent = HttpAgent(srv)
    agent.call("query", {"sql": "CREATE TABLE mcp_mv_src (a int)"})
    for sql in (
        "CREATE MATERIALIZED VIEW mcp_mv AS SELECT a FROM mcp_mv_src",
        "REFRESH MATERIALIZED VIEW mcp_mv",
        "CREATE TABLE mcp_like (LIKE mcp_mv_src)",
    ):
        assert "PostgreSQL wire server" in error_text(agent.call("query", {"sql": sql})), sql
    assert result_data(agent.call("query", {"sql": "SELECT count(*) AS n FROM mcp_mv_src"})) == [
        {"n": 0}
    ]
