"""store_memories: many memories in one call, as store_memory stores one.

In process (hash embedder: identical text is similarity 1.0, so trigger matches are
exact): dedup within the batch and against what is stored, supersede, a trigger fires
once per matching new memory, all-or-nothing on a bad input. Over a real server: the
SQL forms (array, $1 JSON, a subquery over a users' table) composing with SQL, the MCP
tool and the REST route, each returning one row per input in order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import requests
from agent_support import open_layer, run, who
from memory_support import count_rows
from trigger_support import call, fires, register

from proxy.core.errors import AgentError
from tests.conftest import ServerProcess, start_server
from tests.mcp.mcp_support import HttpAgent
from tests.rest.rest_support import KeySpec, create_keys


def test_dedup_supersede_and_triggers_in_process(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            trig = await register(layer, name="refunds", concept="refund request", cooldown_secs=0)
            first = (await layer.call("store_memory", who(), ["old fact"]))[0]
            rows = await layer.call(
                "store_memories",
                who(),
                contents=[
                    "refund request",
                    "old fact",  # already stored
                    {"content": "new fact", "supersedes": first["memory_id"], "importance": 0.9},
                    "refund request",  # repeated within the batch
                ],
                metadata={"source": "import"},
                wait=True,
            )
            assert [r["ordinality"] for r in rows] == [1, 2, 3, 4]
            assert [r["deduplicated"] for r in rows] == [False, True, False, True]
            assert rows[1]["memory_id"] == first["memory_id"]
            assert rows[3]["memory_id"] == rows[0]["memory_id"]
            assert all(r["embedding_status"] == "embedded" for r in rows)
            assert rows[2]["superseded_id"] == first["memory_id"]
            old = (await layer.call("get_memory", who(), memory_id=first["memory_id"]))[0]
            assert old["conflict_status"] == "superseded"
            new = (await layer.call("get_memory", who(), memory_id=rows[2]["memory_id"]))[0]
            assert new["importance"] == 0.9 and new["metadata"] == {"source": "import"}
            assert await count_rows(layer) == 3  # old fact, refund request, new fact

            # One fire for the one new matching memory, none for its repeat.
            await layer.triggers.drain()
            assert len(await fires(layer, trig["trigger_id"])) == 1
            # Another matching memory in a later batch fires again (cooldown 0).
            await call(layer, "delete_memory", who(), memory_id=rows[0]["memory_id"])
            await layer.call("store_memories", who(), contents=["refund request", "x"], wait=True)
            await layer.triggers.drain()
            assert len(await fires(layer, trig["trigger_id"])) == 2

            # A bad input fails the call, names its position and stores nothing.
            before = await count_rows(layer)
            with pytest.raises(AgentError) as err:
                await layer.call("store_memories", who(), contents=["fine", {"content": " "}])
            assert err.value.sqlstate == "22023" and "input 2" in err.value.message
            with pytest.raises(AgentError, match="too large"):
                await layer.call("store_memories", who(), contents=["a"], ttl_seconds=10**15)
            with pytest.raises(AgentError, match="unknown field"):
                await layer.call("store_memories", who(), contents=[{"text": "a"}])
            assert await count_rows(layer) == before

    run(go())


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str]]:
    tmp = tmp_path_factory.mktemp("store-memories")
    secret = create_keys(tmp / "data", {"admin": KeySpec("admin")})["admin"]
    srv = start_server(tmp, "--embedding-provider", "hash", "--rate-limit-per-minute", "0")
    yield srv, secret
    srv.stop()


def test_sql_forms_compose_with_sql(keyed: tuple[ServerProcess, str]) -> None:
    srv, secret = keyed
    with psycopg.connect(srv.dsn, password=secret, autocommit=True) as con:
        got = con.execute(
            "SELECT ordinality, deduplicated FROM store_memories(['sql a', 'sql b', 'sql a'])"
            " ORDER BY ordinality"
        ).fetchall()
        assert got == [(1, False), (2, False), (3, True)]
        n = con.execute(
            "SELECT count(*) FROM store_memories(%s, wait := true) WHERE deduplicated",
            (json.dumps(["sql b", "sql c"]),),
        ).fetchone()
        assert n == (1,)
        con.execute("CREATE TABLE staging (content TEXT, metadata JSON, importance DOUBLE)")
        con.execute(
            "INSERT INTO staging VALUES ('from staging 1', '{\"k\": 1}', 0.8),"
            " ('from staging 2', NULL, 0.2), ('sql a', NULL, 0.5)"
        )
        rows = con.execute(
            "SELECT s.ordinality, s.deduplicated, m.content, m.importance, m.metadata"
            " FROM store_memories((SELECT content, metadata, importance FROM staging"
            " ORDER BY content)) s JOIN _hatidata_agent_memory m USING (memory_id)"
            " ORDER BY s.ordinality"
        ).fetchall()
        assert rows == [
            (1, False, "from staging 1", 0.8, {"k": 1}),
            (2, False, "from staging 2", 0.2, {}),
            (3, True, "sql a", 0.5, {}),
        ]
        with pytest.raises(psycopg.errors.UndefinedTable):
            con.execute("SELECT * FROM store_memories((SELECT content FROM no_such_table))")
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="input 2"):
            con.execute("SELECT * FROM store_memories(['ok', ''])")
        left = con.execute(
            "SELECT count(*) FROM _hatidata_agent_memory WHERE content = 'ok'"
        ).fetchone()
        assert left == (0,)


def test_mcp_and_rest(keyed: tuple[ServerProcess, str]) -> None:
    srv, secret = keyed
    auth = f"ApiKey {secret}"
    agent = HttpAgent(srv, "mcp-bot", Authorization=auth)
    out = agent.data("store_memories", {"contents": ["mcp 1", "mcp 2", "mcp 1"], "wait": True})
    assert [(r["ordinality"], r["deduplicated"]) for r in out] == [
        (1, False),
        (2, False),
        (3, True),
    ]
    assert {r["embedding_status"] for r in out} == {"embedded"}

    url = f"{srv.rest_url}/v1/organizations/local/agent-memory/batch"
    body = {
        "agent_id": "rest-bot",
        "memories": [{"content": "rest 1"}, {"content": "rest 2", "importance": 0.9}],
        "wait": True,
    }
    r = requests.post(url, json=body, headers={"Authorization": auth}, timeout=60)
    assert r.status_code == 200, r.text
    first = r.json()
    assert [x["ordinality"] for x in first] == [1, 2]
    assert [x["embedding_status"] for x in first] == ["embedded", "embedded"]
    body["memories"] = [
        {"content": "rest 2"},
        {"content": "rest 3", "supersedes": first[0]["memory_id"]},
    ]
    again = requests.post(url, json=body, headers={"Authorization": auth}, timeout=60).json()
    assert again[0]["deduplicated"] and again[0]["memory_id"] == first[1]["memory_id"]
    assert again[1]["superseded_id"] == first[0]["memory_id"]
    bad = requests.post(
        url,
        json={"agent_id": "rest-bot", "memories": [{"content": "x", "importance": 2}]},
        headers={"Authorization": auth},
        timeout=60,
    )
    assert bad.status_code == 422
