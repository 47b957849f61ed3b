"""The public hatidata-agent SDK (0.4.0), unchanged, against hatiproxy.

HatiDataAgent over the wire (plain SQL, DML, hatidata_context, hatidata_rag_context,
reasoning chains, hybrid SQL through our POST /v1/transpile), ControlPlaneClient over
REST, and the SDK's `hatidata-mcp-server` speaking MCP over stdio to the official
`mcp` client. Real all-MiniLM-L6-v2 vectors, so rankings are checked for meaning.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import psycopg2
import pytest
import requests
from hatidata_agent import HatiDataAgent
from hatidata_agent.client import HatiDataError, HybridSQLError
from hatidata_agent.control_plane import ControlPlaneClient

from tests.rest.rest_support import KeyedServer, KeySpec, keyed_server

TICKETS = [
    (1, "Customer disputes a charge on the monthly invoice"),
    (2, "Sunny weather expected in Paris all week"),
    (3, "Refund requested after being billed twice for one order"),
    (4, "The football match ended in a goalless draw"),
    (5, "Billing error: the credit card was charged the wrong amount"),
    (6, "New recipe for a chocolate cake with berries"),
]
BILLING = {1, 3, 5}
MCP_SERVER = str(Path(sys.executable).with_name("hatidata-mcp-server"))
DEFAULT_HOOK = "http://127.0.0.1:9/hook"  # the server's trigger_webhook_url; never fired here


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    from proxy.embedding.manage import ensure_default_model

    models = tmp_path_factory.mktemp("sdk-models")
    ensure_default_model(models)  # the offline all-MiniLM-L6-v2, converted once
    server = keyed_server(
        tmp_path_factory.mktemp("sdk"),
        {
            "admin": KeySpec("admin"),
            "bot": KeySpec("agent", agent_id="sdk-bot"),
            "mcp": KeySpec("agent", agent_id="mcp-bot"),
        },
        "--embedding-provider",
        "onnx",
        "--model-dir",
        str(models),
        "--trigger-webhook-url",
        DEFAULT_HOOK,
    )
    try:
        conn = psycopg2.connect(
            host="127.0.0.1",
            port=server.server.port,
            user="admin",
            password=server.secrets["admin"],
            dbname="hatidata",
        )
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE tickets (id INT PRIMARY KEY, content TEXT)")
            cur.executemany("INSERT INTO tickets VALUES (%s, %s)", TICKETS)
            cur.execute(
                "CREATE TABLE kb AS SELECT id, content AS answer, "
                "__HATI_EMBED__(content) AS embedding FROM tickets"
            )
        conn.close()
        yield server
    finally:
        server.server.stop()


@pytest.fixture
def agent(ks: KeyedServer) -> Iterator[HatiDataAgent]:
    a = HatiDataAgent(
        host="127.0.0.1",
        port=ks.server.port,
        agent_id="sdk-bot",
        user="sdk",
        password=ks.secrets["bot"],
        cloud_key=ks.secrets["bot"],
        cloud_endpoint=ks.url,
    )
    try:
        yield a
    finally:
        a.close()


# --- HatiDataAgent over the wire -------------------------------------------------------


def test_query_and_execute(agent: HatiDataAgent) -> None:
    assert agent.query("SELECT count(*) AS n FROM tickets") == [{"n": 6}]
    rows = agent.query("SELECT id, content FROM tickets WHERE id = %s", (3,))
    assert rows == [{"id": 3, "content": TICKETS[2][1]}]
    agent.execute("CREATE TABLE sdk_notes (id INT, note TEXT)")
    assert agent.execute("INSERT INTO sdk_notes VALUES (%s, %s), (%s, %s)", (1, "a", 2, "b")) == 2
    assert agent.execute("UPDATE sdk_notes SET note = 'z' WHERE id >= 1") == 2
    assert agent.execute("DELETE FROM sdk_notes WHERE id = %s", (1,)) == 1
    assert agent.query("SELECT * FROM sdk_notes") == [{"id": 2, "note": "z"}]
    assert agent.query("DROP TABLE sdk_notes") == []


def test_get_context_is_bm25_over_the_table(agent: HatiDataAgent) -> None:
    rows = agent.get_context("tickets", "refund billed twice", top_k=2)
    assert rows[0]["id"] == 3
    assert len(rows) <= 2 and {"id", "content"} <= set(rows[0])


def test_get_rag_context_nearest_vectors(agent: HatiDataAgent) -> None:
    (row,) = agent.query("SELECT __HATI_EMBED__('rain and sunshine forecast') AS v")
    # a vector arrives as pgvector's text '[...]' (psycopg2 has no vector adapter of its own)
    assert row["v"].startswith("[") and row["v"].endswith("]")
    vector = json.loads(row["v"])
    assert len(vector) == 384
    rows = agent.get_rag_context("kb", "embedding", vector, top_k=2)
    assert [r["id"] for r in rows][0] == 2  # the weather ticket
    assert len(rows) == 2


def test_reasoning_chain_sets_are_accepted(agent: HatiDataAgent) -> None:
    probe = (
        "SELECT current_setting('hatidata_request_id') AS rid, "
        "current_setting('hatidata_reasoning_step') AS step"
    )
    with agent.reasoning_chain("req-sdk-1", parent_request_id="req-parent") as chain:
        first = chain.query(probe)
        second = chain.query(probe)
        explicit = chain.query(probe, step=7)
    assert first == [{"rid": "req-sdk-1", "step": "0"}]
    assert second == [{"rid": "req-sdk-1", "step": "1"}]
    assert explicit == [{"rid": "req-sdk-1", "step": "7"}]
    assert agent.query(probe) == [{"rid": "", "step": ""}]  # reset by the chain's end
    assert agent.query("SELECT 1 AS one", request_id="req-2") == [{"one": 1}]


def test_state_upsert_as_the_sdk_sends_it(agent: HatiDataAgent) -> None:
    """HatiDataAgent.set_state's statement, with its % doubled as psycopg2 needs.

    The SDK itself forgets the doubling (psycopg2 then fails on the client, see the
    MCP test); this is what it would send once fixed: INSERT .. ON CONFLICT DO UPDATE
    with `strftime(now(), ...)` in the SET list.
    """
    agent._ensure_memory_schema()  # the SDK's own CREATE SCHEMA / CREATE TABLE
    upsert = (
        'INSERT INTO "_hatidata_memory_local".agent_state (agent_id, key, value) '
        "VALUES (%s, %s, %s) ON CONFLICT (agent_id, key) DO UPDATE "
        'SET value = EXCLUDED.value, version = "_hatidata_memory_local".agent_state.version + 1, '
        "updated_at = strftime(now(), '%%Y-%%m-%%dT%%H:%%M:%%SZ')"
    )
    for value in ("calm", {"level": 2}):
        agent.execute(upsert, (agent.agent_id, "mood", json.dumps(value)))
    assert agent.get_state("mood") == {"level": 2}
    rows = agent.query(
        'SELECT version FROM "_hatidata_memory_local".agent_state WHERE key = %s', ("mood",)
    )
    assert rows == [{"version": 2}]


def test_hybrid_sql_goes_through_our_transpile_and_wire(agent: HatiDataAgent) -> None:
    sql = (
        "SELECT id, content FROM tickets WHERE semantic_match(content, 'billing dispute', 0.3) "
        "ORDER BY semantic_rank(content, 'billing dispute') DESC"
    )
    resolved = agent._maybe_transpile(sql)  # the SDK's own call to {cloud_endpoint}/v1/transpile
    assert "billing dispute" not in resolved and "AS FLOAT[384])" in resolved
    rows = agent.query(sql)
    ids = [r["id"] for r in rows]
    assert ids and set(ids) <= BILLING  # nothing about weather, sports or cake
    assert ids[0] in {1, 5}
    # psycopg2 parameters: the SQL comes back unchanged, psycopg2 fills in the text.
    with_param = agent.query(
        "SELECT id FROM tickets WHERE semantic_match(content, %s, 0.3) ORDER BY id",
        ("billing dispute",),
    )
    assert {r["id"] for r in with_param} == set(ids)
    ranked = agent.query(
        "SELECT id, semantic_rank(content, 'football score') AS s FROM tickets "
        "ORDER BY s DESC LIMIT 2"
    )
    assert ranked[0]["id"] == 4 and ranked[0]["s"] > ranked[1]["s"]


def test_join_vector_through_the_sdk(agent: HatiDataAgent) -> None:
    rows = agent.query(
        "SELECT t.id, k.id AS kb_id FROM tickets t JOIN_VECTOR kb k "
        "ON semantic_match(k.embedding, t.content, 0.99) ORDER BY t.id"
    )
    assert [(r["id"], r["kb_id"]) for r in rows] == [(i, i) for i, _ in TICKETS]


def test_hybrid_sql_key_errors(ks: KeyedServer) -> None:
    no_key = HatiDataAgent(host="127.0.0.1", port=ks.server.port, cloud_endpoint=ks.url)
    no_key.cloud_key = None  # ignore a developer's ~/.hatidata/config.json
    with pytest.raises(HybridSQLError):
        no_key.query("SELECT * FROM tickets WHERE semantic_match(content, 'x')")
    bad = HatiDataAgent(
        host="127.0.0.1", port=ks.server.port, cloud_key="hd_live_nope", cloud_endpoint=ks.url
    )
    with pytest.raises(HatiDataError, match=r"\(401\)"):
        bad.query("SELECT * FROM tickets WHERE semantic_match(content, 'x')")


# --- ControlPlaneClient over REST ------------------------------------------------------


@pytest.fixture
def cp(ks: KeyedServer) -> ControlPlaneClient:
    return ControlPlaneClient(base_url=ks.url, api_key=ks.secrets["admin"], org_id="local")


def _embedded(cp: ControlPlaneClient, agent_id: str, count: int) -> list[dict]:
    deadline = time.monotonic() + 30
    while True:
        rows = cp.list_memories(agent_id=agent_id)
        if sum(r["embedding_status"] == "embedded" for r in rows) >= count:
            return rows
        assert time.monotonic() < deadline, rows
        time.sleep(0.1)


def test_control_plane_memory(cp: ControlPlaneClient) -> None:
    assert cp.health_check() is True
    agent_id = f"cp-{uuid.uuid4().hex[:6]}"
    texts = [
        "The user prefers PostgreSQL with Drizzle ORM over Prisma",
        "The office plant needs watering every Tuesday",
        "Quarterly revenue grew twelve percent in Europe",
    ]
    made = [cp.create_memory(agent_id=agent_id, content=t, memory_type="semantic") for t in texts]
    assert [m["content"] for m in made] == texts
    assert all(m["agent_id"] == agent_id and m["org_id"] == "local" for m in made)
    listed = _embedded(cp, agent_id, 3)
    assert {m["id"] for m in listed} == {m["id"] for m in made}
    assert cp.list_memories(agent_id=agent_id, memory_type="episodic") == []
    hits = cp.search_memory("which database ORM does the user like", agent_id=agent_id, top_k=2)
    assert hits[0]["entry"]["id"] == made[0]["id"]
    assert hits[0]["score"] >= hits[-1]["score"] and len(hits) <= 2
    stats = cp.embedding_stats()
    assert stats["total"] >= 3 and stats["dimensions"] == 384
    assert any(m["count"] >= 3 for m in stats["models"])
    assert cp.delete_memory(made[1]["id"]) == {"memory_id": made[1]["id"], "status": "deleted"}
    assert made[1]["id"] not in {m["id"] for m in cp.list_memories(agent_id=agent_id)}
    with pytest.raises(requests.HTTPError) as err:
        cp.delete_memory(made[1]["id"])
    assert err.value.response.status_code == 404


def test_control_plane_triggers(cp: ControlPlaneClient) -> None:
    name = f"refunds-{uuid.uuid4().hex[:6]}"
    t = cp.create_trigger(
        name=name, concept="customer asks for a refund", threshold=0.5, actions=["write_event"]
    )
    assert t["name"] == name and t["threshold"] == 0.5
    assert t["id"] in {x["id"] for x in cp.list_triggers()}
    hit = cp.test_trigger(t["id"], "I want my money back for this broken order, refund please")
    miss = cp.test_trigger(t["id"], "The football match ended in a draw")
    assert hit["would_fire"] is True and miss["would_fire"] is False
    assert hit["similarity"] > miss["similarity"]
    assert cp.delete_trigger(t["id"]) == {"trigger_id": t["id"], "status": "deleted"}
    assert t["id"] not in {x["id"] for x in cp.list_triggers()}


def test_control_plane_default_webhook(cp: ControlPlaneClient) -> None:
    # The client's default action is a webhook without a URL: the server's default is used.
    t = cp.create_trigger(name=f"hook-{uuid.uuid4().hex[:6]}", concept="late invoice payments")
    assert t["actions"] == ["webhook"] and t["action_config"]["url"] == DEFAULT_HOOK
    assert cp.delete_trigger(t["id"])["status"] == "deleted"


def test_control_plane_agent_key_usage(cp: ControlPlaneClient, ks: KeyedServer) -> None:
    key = cp.create_agent_key("usage-bot", framework="custom")
    conn = psycopg2.connect(
        host="127.0.0.1", port=ks.server.port, user="u", password=key["raw_key"],
        dbname="hatidata",
    )  # fmt: skip
    conn.autocommit = True
    with conn.cursor() as cur:
        for n in range(3):
            cur.execute("SELECT %s", (n,))
    conn.close()
    usage = cp.get_agent_key_usage(key["id"])
    assert usage["key_id"] == key["id"] and usage["agent_name"] == "usage-bot"
    assert usage["requests_by_interface"] == {"wire": 1, "rest": 0, "mcp": 0}
    assert usage["total_queries"] == 3 and usage["last_used_at"] is not None
    branch = cp.get_agent_key_branch_usage(key["id"])
    assert branch["branches_created"] == 0 and branch["queries_in_branches"] == 0


def test_control_plane_chain_of_thought(cp: ControlPlaneClient) -> None:
    sid, traces = ControlPlaneClient.build_cot_session(
        "cp-cot",
        "local",
        [
            {"type": "observation", "content": {"text": "invoice total looks wrong"}},
            {"type": "analysis", "content": {"sum": 41.5, "expected": 40}},
            {"type": "decision", "content": {"action": "refund", "amount": 1.5}},
        ],
    )
    ingested = cp.ingest_cot(traces)
    assert ingested["ingested"] == 3
    assert sid in {s["session_id"] for s in cp.list_cot_sessions()}
    replay = cp.replay_cot(sid)
    assert [s["trace_type"] for s in replay["steps"]] == ["observation", "analysis", "decision"]
    assert replay["steps"][2]["content"] == {"action": "refund", "amount": 1.5}
    assert replay["chain_valid"] is True
    assert cp.verify_cot(sid)["chain_valid"] is True


def test_control_plane_branches(cp: ControlPlaneClient, ks: KeyedServer) -> None:
    b = cp.create_branch(agent_id="sdk-bot", tables=["tickets"], description="what-if")
    assert (b["agent_id"], b["status"], b["description"]) == ("sdk-bot", "active", "what-if")
    assert [c["table"] for c in b["tables_copied"]] == ["tickets"]
    assert b["id"] in {x["id"] for x in cp.list_branches()}
    assert [a["event"] for a in cp.get_branch(b["id"])["audit"]] == ["created"]
    conn = psycopg2.connect(
        host="127.0.0.1", port=ks.server.port, user="sdk", password=ks.secrets["bot"],
        dbname="hatidata",
    )  # fmt: skip
    conn.autocommit = True
    with conn.cursor() as cur:  # the agent writes in its branch over the wire
        cur.execute(
            "SELECT * FROM branch_query(%s, %s)",
            (b["id"], "UPDATE tickets SET content = 'rewritten' WHERE id = 2"),
        )
    conn.close()
    diff = cp.branch_diff(b["id"])
    (tickets,) = diff["tables"]
    assert tickets["branch"] == {"added": 0, "removed": 0, "changed": 1}
    assert tickets["main"] == {"added": 0, "removed": 0, "changed": 0}
    assert cp.branch_conflicts(b["id"])["has_conflicts"] is False
    cost = cp.branch_cost(b["id"])
    assert cost["query_count"] == 1 and cost["rows"] == len(TICKETS)
    assert cost["storage_bytes"] > 0
    assert cp.branch_analytics()["by_status"]["active"] >= 1
    # main_wins: main keeps its rows (no key is new), so the other tests' data stays put.
    merged = cp.merge_branch(b["id"], strategy="main_wins")
    assert merged["status"] == "merged" and merged["tables"][0]["rows_inserted"] == 0
    other = cp.create_branch(agent_id="sdk-bot", tables=[])
    assert cp.discard_branch(other["id"])["status"] == "discarded"
    with pytest.raises(requests.HTTPError) as err:
        cp.get_branch(uuid.uuid4().hex)
    assert err.value.response.status_code == 404


# --- hatidata-mcp-server (the SDK's MCP server) over stdio -----------------------------


def test_sdk_mcp_server_over_stdio(ks: KeyedServer) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=MCP_SERVER,
        args=[
            "--host",
            "127.0.0.1",
            "--port",
            str(ks.server.port),
            "--agent-id",
            "mcp-bot",
            "--password",
            ks.secrets["mcp"],
        ],  # fmt: skip
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
    )
    session_id = f"sess-{uuid.uuid4().hex[:8]}"

    async def scenario() -> dict[str, object]:
        out: dict[str, object] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            out["tools"] = {t.name for t in (await s.list_tools()).tools}

            async def call(name: str, args: dict | None = None) -> object:
                result = await s.call_tool(name, args or {})
                text = result.content[0].text
                assert not result.is_error, f"{name}: {text}"
                return json.loads(text)

            out["query"] = await call("query", {"sql": "SELECT id FROM tickets ORDER BY id"})
            out["tables"] = await call("list_tables")
            out["describe"] = await call("describe_table", {"table_name": "tickets"})
            stored = await call(
                "store_memory",
                {"content": "the launch code word is pelican", "metadata": {"src": "t"}},
            )
            out["stored"] = stored
            out["search"] = await call("search_memory", {"query": "launch pelican code"})
            # SDK bug: set_agent_state sends `strftime(now(), '%Y-%m-%dT%H:%M:%SZ')` in a
            # parameterised query without doubling the %, so psycopg2 fails on the client
            # (IndexError) before anything reaches the server.
            bad = await s.call_tool("set_agent_state", {"key": "mood", "value": "calm"})
            out["set_state_error"] = (bad.is_error, bad.content[0].text)
            out["state"] = await call("get_agent_state", {"key": "mood"})
            for step, text in (("observation", "totals differ"), ("decision", "refund it")):
                out[step] = await call(
                    "log_reasoning_step",
                    {"session_id": session_id, "step_type": step, "content": text},
                )
            out["replay"] = await call(
                "replay_decision", {"session_id": session_id, "verify_chain": True}
            )
            out["deleted"] = await call("delete_memory", {"memory_id": stored["memory_id"]})
        return out

    out = anyio.run(scenario)
    assert len(out["tools"]) == 23 and {"query", "store_memory", "replay_decision"} <= out["tools"]
    assert out["query"] == [{"id": i} for i, _ in TICKETS]
    tables = {(t["table_schema"], t["table_name"], t["table_type"]) for t in out["tables"]}
    # hatiproxy names DuckDB's `main` schema `public`, as Postgres clients expect.
    assert {("public", "tickets", "BASE TABLE"), ("public", "kb", "BASE TABLE")} <= tables
    # Postgres type names in information_schema, as a Postgres server answers.
    assert [(c["column_name"], c["data_type"]) for c in out["describe"]] == [
        ("id", "integer"),
        ("content", "text"),
    ]
    memory_id = out["stored"]["memory_id"]
    assert [m["memory_id"] for m in out["search"]] == [memory_id]
    assert out["search"][0]["agent_id"] == "mcp-bot"
    assert json.loads(out["search"][0]["metadata"]) == {"src": "t"}
    assert out["set_state_error"] == (True, "Error: tuple index out of range")
    assert out["state"] == {"key": "mood", "value": None}  # nothing could be stored
    assert out["deleted"] == {"deleted": True, "memory_id": memory_id}
    assert out["observation"]["session_id"] == session_id
    replay = out["replay"]
    assert replay["step_count"] == 2 and replay["chain_valid"] is True
    assert [s["step_type"] for s in replay["steps"]] == ["observation", "decision"]
    assert replay["steps"][1]["prev_hash"] == replay["steps"][0]["hash"]
