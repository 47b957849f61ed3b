"""Chain-of-thought ledger: appends, the hash chain, isolation, concurrency, approvals, export."""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from pathlib import Path

import pytest
from agent_support import open_layer, run, who
from ledger_support import admin, history, steps, trace, verify

from proxy.agent.ledger.hashing import (
    GENESIS_HASH,
    canonical_json,
    chain_hash,
    content_hash,
)
from proxy.agent.ledger.verify import replay_document
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.execution.executor import execute_sql
from proxy.wire.errors import PgError

# -- canonical form ----------------------------------------------------------------------


def test_canonical_json_is_rfc8785() -> None:
    value = {
        "b": [1.0, 4.50, 1e21, 1e-7, 0.000001, -0.0, 2**60],
        "a": 'é\n"',
        "\uff01": None,
        "\U0001f600": True,
    }
    text = canonical_json(value)
    # Keys by UTF-16 code units: U+1F600 (surrogates D83D DE00) sorts before U+FF01.
    assert text == (
        '{"a":"é\\n\\"","b":[1,4.5,1e+21,1e-7,0.000001,0,1152921504606846976],'
        '"\U0001f600":true,"\uff01":null}'
    )
    assert content_hash("hello") == hashlib.sha256(b'"hello"').hexdigest()
    with pytest.raises(ValueError):
        canonical_json({"x": float("inf")})


# -- appending, replay -------------------------------------------------------------------


def test_log_steps_replay_in_order_with_a_valid_chain(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            logged = await steps(layer, n=4)
            assert [r["step_index"] for r in logged] == [0, 1, 2, 3]
            last = await layer.call(
                "log_reasoning_step",
                who(),
                session_id="sess-1",
                content="decided",
                step_type="decision",
                metadata={"tool": "sql", "score": 1.0},
                importance=0.9,
                parent_trace_id=logged[3]["trace_id"],
            )
            assert last[0]["step_index"] == 4
            rows = await layer.call(
                "replay_decision", who(), session_id="sess-1", verify_chain=True
            )
            assert [r["step_index"] for r in rows] == [0, 1, 2, 3, 4]
            assert [r["content"] for r in rows] == [f"step {i}" for i in range(4)] + ["decided"]
            assert rows[0]["step_type"] == "observation" and rows[0]["importance"] == 0.5
            assert rows[4]["metadata"] == {"tool": "sql", "score": 1}
            assert rows[4]["parent_trace_id"] == logged[3]["trace_id"]
            assert all(r["chain_valid"] and r["step_valid"] for r in rows)
            # Documented hashes, recomputed from the outside.
            assert rows[0]["prev_hash"] == GENESIS_HASH
            for prev, row in zip([None, *rows], rows, strict=False):
                assert row["content_hash"] == content_hash(row["content"])
                if prev is not None:
                    assert row["prev_hash"] == prev["chain_hash"]
                assert row["chain_hash"] == chain_hash(
                    prev_hash=row["prev_hash"],
                    content_hash=row["content_hash"],
                    org_id="local",
                    agent_id="agent-a",
                    session_id="sess-1",
                    step_index=row["step_index"],
                    step_type=row["step_type"],
                    timestamp=row["timestamp"],
                    trace_id=row["trace_id"],
                    parent_trace_id=row["parent_trace_id"],
                    metadata=row["metadata"],
                    importance=row["importance"],
                )
            unverified = await layer.call("replay_decision", who(), session_id="sess-1")
            assert unverified[0]["chain_valid"] is None
            doc = replay_document(rows)
            assert doc["session_id"] == "sess-1" and doc["step_count"] == 5
            assert doc["chain_valid"] is True
            assert doc["steps"][0]["trace_type"] == "observation"
            json.dumps(doc)
            sessions = await history(layer)
            assert [(s["session_id"], s["total_steps"], s["chain_valid"]) for s in sessions] == [
                ("sess-1", 5, True)
            ]

    run(go())


def test_session_history_filters(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await layer.call("ingest_traces", who(), traces=[trace("old", i=0)])
            await layer.call(
                "ingest_traces",
                who(),
                traces=[trace("new", i=0, timestamp="2026-05-01T00:00:00Z")],
            )
            names = [s["session_id"] for s in await history(layer)]
            assert names == ["new", "old"]  # most recently active first
            recent = await layer.call("get_session_history", who(), since="2026-04-01T00:00:00Z")
            assert [s["session_id"] for s in recent] == ["new"]
            assert len(await layer.call("get_session_history", who(), limit=1)) == 1
            with pytest.raises(AgentError):
                await layer.call("get_session_history", who(), limit=0)
            with pytest.raises(AgentError):
                await layer.call("get_session_history", who(), since="yesterday")

    run(go())


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"content": ""}, "content"),
        ({"content": None}, "content"),
        ({"content": "x", "step_type": "musing"}, "not a known type"),
        ({"content": "x", "importance": 1.5}, "between 0 and 1"),
        ({"content": "x", "importance": -0.1}, "between 0 and 1"),
        ({"content": "x", "metadata": [1, 2]}, "JSON object"),
        ({"content": "x", "metadata": "{not json"}, "JSON object"),
        ({"content": "x", "parent_trace_id": "nope"}, "UUID"),
        ({"content": "x" * (1 << 20)}, "limit"),
        ({"content": "x", "session_id": ""}, "session_id"),
    ],
)
def test_invalid_step_arguments_write_nothing(tmp_path: Path, kwargs: dict, words: str) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            args = {"session_id": "sess-1", **kwargs}
            with pytest.raises(AgentError) as err:
                await layer.call("log_reasoning_step", who(), **args)
            assert err.value.sqlstate == "22023", err.value.message
            assert words in err.value.message
            assert await history(layer) == []

    run(go())


# -- isolation ---------------------------------------------------------------------------


def test_another_agents_or_orgs_session_is_not_found(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await steps(layer, n=3)
            for other in (who("agent-b"), who("agent-a", "org-2")):
                for fn in ("replay_decision", "verify_chain", "export_session"):
                    with pytest.raises(AgentError) as err:
                        await layer.call(fn, other, session_id="sess-1")
                    assert err.value.code == "not_found"
                assert await layer.call("get_session_history", other) == []
                with pytest.raises(AgentError) as err:
                    await layer.call(
                        "record_approval", other, session_id="sess-1", decision="approve"
                    )
                assert err.value.code == "not_found"
            b = who("agent-b")
            # Naming agent-a does not help an ordinary identity.
            with pytest.raises(AgentError) as err:
                await layer.call("replay_decision", b, session_id="sess-1", agent_id="agent-a")
            assert err.value.code == "not_found"
            assert await layer.call("get_session_history", b, agent_id="agent-a") == []
            with pytest.raises(AgentError) as err:
                await layer.call("ingest_traces", b, traces=[trace(agent="agent-a")])
            assert err.value.code == "forbidden"
            # agent-b's session of the same name is its own chain; agent-a's is untouched.
            mine = await layer.call("log_reasoning_step", b, session_id="sess-1", content="b")
            assert mine[0]["step_index"] == 0
            assert (await verify(layer))["total_traces"] == 3
            # Plain SELECT over the agent relations shows only the caller's rows.
            _, rows = await execute_sql(
                layer, b, "SELECT agent_id, content FROM main._hatidata_cot_traces"
            )
            assert rows == [("agent-b", '"b"')]
            with pytest.raises(PgError) as perr:
                await execute_sql(layer, b, "SELECT * FROM hatidata_internal.cot_traces")
            assert perr.value.sqlstate == "42P01"  # in the agent database: not nameable

    run(go())


def test_admin_scope_reads_any_agent_of_its_org(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await steps(layer, n=2)
            boss = admin()
            assert (await layer.call("verify_chain", boss, session_id="sess-1"))[0][
                "agent_id"
            ] == "agent-a"
            rows = await layer.call(
                "replay_decision", boss, session_id="sess-1", agent_id="agent-a"
            )
            assert len(rows) == 2
            assert [s["agent_id"] for s in await layer.call("get_session_history", boss)] == [
                "agent-a"
            ]
            # Ingest on behalf of agents (REST flight recorder), and ambiguity is explained.
            await layer.call("ingest_traces", boss, traces=[trace(agent="agent-c")])
            with pytest.raises(AgentError) as err:
                await layer.call("verify_chain", boss, session_id="sess-1")
            assert "several agents" in err.value.message
            other_org = Identity("org-2", "auditor", "x", boss.scopes)
            with pytest.raises(AgentError) as err:
                await layer.call("verify_chain", other_org, session_id="sess-1")
            assert err.value.code == "not_found"

    run(go())


# -- concurrency -------------------------------------------------------------------------


def test_concurrent_appends_keep_one_valid_chain(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            calls = [
                layer.call("log_reasoning_step", who(), session_id="sess-1", content=f"c{i}")
                for i in range(50)
            ]
            # Other sessions and a batch ingest interleave with them.
            calls += [
                layer.call("log_reasoning_step", who(), session_id=f"other-{i % 3}", content="o")
                for i in range(9)
            ]
            calls.append(layer.call("ingest_traces", who(), traces=[trace(i=i) for i in range(20)]))
            await asyncio.gather(*calls)
            check = await verify(layer)
            assert check["chain_valid"], check
            assert check["total_traces"] == 70
            rows = await layer.call("replay_decision", who(), session_id="sess-1")
            assert [r["step_index"] for r in rows] == list(range(70))
            for i in range(3):
                assert (await verify(layer, f"other-{i}"))["total_traces"] == 3

    run(go())


# -- approvals and export ----------------------------------------------------------------


def test_approvals_are_immutable_records(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            logged = await steps(layer, n=2)
            await steps(layer, session="other", n=1)
            first = await layer.call(
                "record_approval",
                who(),
                session_id="sess-1",
                decision="approve",
                trace_id=logged[1]["trace_id"],
                reason="sources are right",
            )
            assert first[0]["decision"] == "approve" and first[0]["reviewed_by"] == "tester"
            assert first[0]["trace_id"] == logged[1]["trace_id"]
            boss = await layer.call(
                "record_approval",
                admin(),
                session_id="sess-1",
                agent_id="agent-a",
                decision="reject",
            )
            assert boss[0]["reviewed_by"] == "admin@example.com"
            for bad, code in [
                ({"decision": "maybe"}, "invalid_argument"),
                ({"decision": "approve", "trace_id": "nope"}, "invalid_argument"),
                ({"decision": "approve", "session_id": "missing"}, "not_found"),
                # A step of another session is not a step of this one.
                ({"decision": "approve", "trace_id": str(uuid.uuid4())}, "not_found"),
            ]:
                with pytest.raises(AgentError) as err:
                    await layer.call("record_approval", who(), **{"session_id": "sess-1", **bad})
                assert err.value.code == code
            listed = await layer.call("list_approvals", who(), session_id="sess-1")
            assert [a["decision"] for a in listed] == ["approve", "reject"]
            assert await layer.call("list_approvals", who("agent-b")) == []
            # No function changes an approval, and the views refuse writes.
            assert not [
                n
                for n in layer.registry.functions
                if "approval" in n and "record" not in n and "list" not in n
            ]
            for sql in (
                "UPDATE main._hatidata_cot_approvals SET decision = 'reject'",
                "DELETE FROM main._hatidata_cot_approvals",
                "DELETE FROM main._hatidata_cot_traces",
                "UPDATE hatidata_internal.cot_approvals SET decision = 'reject'",
            ):
                with pytest.raises(PgError):
                    await execute_sql(layer, who(), sql)
            again = await layer.call("list_approvals", who(), session_id="sess-1")
            assert again == listed

    run(go())


def test_export_is_one_json_document(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await steps(layer, n=3)
            await layer.call("record_approval", who(), session_id="sess-1", decision="approve")
            rows = await layer.call("export_session", who(), session_id="sess-1")
            doc = json.loads(json.dumps(rows[0]["document"]))  # plain JSON, no custom types
            assert doc["session"]["session_id"] == "sess-1"
            assert doc["session"]["agent_id"] == "agent-a"
            assert doc["session"]["total_steps"] == 3
            assert [s["content"] for s in doc["steps"]] == ["step 0", "step 1", "step 2"]
            assert doc["verification"]["chain_valid"] is True
            assert doc["verification"]["total_traces"] == 3
            assert [a["decision"] for a in doc["approvals"]] == ["approve"]
            assert doc["hash"]["canonical_json"].startswith("RFC 8785")
            _, sql_rows = await execute_sql(
                layer,
                who(),
                "SELECT document->'verification'->>'chain_valid' FROM export_session('sess-1')",
            )
            assert sql_rows == [("true",)]

    run(go())


# -- SQL, triggers, restart --------------------------------------------------------------


def test_sql_table_functions(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            a = who()
            await execute_sql(
                layer, a, "SELECT * FROM log_reasoning_step('s', 'looked', step_type := 'analysis')"
            )
            batch = json.dumps([trace("s", i=1)]).replace("'", "''")
            _, rows = await execute_sql(
                layer, a, f"SELECT step_index, status FROM ingest_traces('{batch}')"
            )
            assert rows == [(1, "ingested")]
            _, rows = await execute_sql(
                layer,
                a,
                "SELECT step_index, step_type, chain_valid "
                "FROM replay_decision('s', verify_chain := true) ORDER BY step_index",
            )
            assert rows == [(0, "analysis", True), (1, "thought", True)]
            _, rows = await execute_sql(
                layer, a, "SELECT chain_valid, total_traces FROM verify_chain('s')"
            )
            assert rows == [(True, 2)]
            _, rows = await execute_sql(
                layer, a, "SELECT session_id, total_steps FROM get_session_history()"
            )
            assert rows == [("s", 2)]

    run(go())


def test_each_new_step_is_handed_to_the_triggers(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            seen: list[tuple] = []
            layer.triggers.notify = lambda who, source, sid, text, vec: seen.append(
                (who.agent_id, source, sid, text)
            )
            rows = await layer.call("log_reasoning_step", who(), session_id="s", content="spike")
            batch = [trace("s", i=1, content={"text": "from ingest"}), trace("s", i=2, content=[1])]
            await layer.call("ingest_traces", who(), traces=batch)
            await layer.call("ingest_traces", who(), traces=batch)  # duplicates: not again
            assert seen == [
                ("agent-a", "reasoning", rows[0]["trace_id"], "spike"),
                ("agent-a", "reasoning", batch[0]["trace_id"], "from ingest"),
                ("agent-a", "reasoning", batch[1]["trace_id"], "[1]"),
            ]

    run(go())


def test_ledger_survives_a_restart_and_the_chain_continues(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.duckdb")

    async def first() -> None:
        async with open_layer(tmp_path, database=db) as layer:
            await steps(layer, n=3)
            await layer.call("record_approval", who(), session_id="sess-1", decision="approve")

    async def second() -> None:
        async with open_layer(tmp_path, database=db) as layer:
            assert (await verify(layer))["total_traces"] == 3
            more = await layer.call("log_reasoning_step", who(), session_id="sess-1", content="+")
            assert more[0]["step_index"] == 3
            check = await verify(layer)
            assert check["chain_valid"] and check["total_traces"] == 4
            assert len(await layer.call("list_approvals", who(), session_id="sess-1")) == 1

    run(first())
    run(second())
