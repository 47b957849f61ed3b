"""Chain-of-thought ledger: appends, the hash chain, ingest, isolation, tampering, export."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_support import open_layer, run, who

from proxy.agent import AgentError, Identity
from proxy.agent.ledger_hash import (
    GENESIS_HASH,
    canonical_json,
    chain_hash,
    content_hash,
)
from proxy.agent.ledger_verify import ingest_document, replay_document, verify_document
from proxy.agent.sql_bridge import execute_sql
from proxy.wire.errors import PgError


def trace(session: str = "sess-1", agent: str = "agent-a", i: int = 0, **extra: Any) -> dict:
    content = extra.pop("content", {"text": f"thought {i}", "n": i})
    out = {
        "trace_id": str(uuid.uuid4()),
        "session_id": session,
        "agent_id": agent,
        "timestamp": (dt.datetime(2026, 3, 20, 14, tzinfo=dt.UTC) + dt.timedelta(seconds=i))
        .isoformat()
        .replace("+00:00", "Z"),
        "trace_type": "thought",
        "content": content,
        "content_hash": content_hash(content),
    }
    out.update(extra)
    return out


async def steps(layer, session: str = "sess-1", n: int = 5, agent: str = "agent-a") -> list:
    out = []
    for i in range(n):
        rows = await layer.call(
            "log_reasoning_step", who(agent), session_id=session, content=f"step {i}"
        )
        out.append(rows[0])
    return out


async def verify(layer, session: str = "sess-1", agent: str = "agent-a") -> dict:
    return (await layer.call("verify_chain", who(agent), session_id=session))[0]


async def history(layer, agent: str = "agent-a") -> list[dict]:
    return await layer.call("get_session_history", who(agent))


def admin(agent: str = "auditor") -> Identity:
    return Identity(
        "local", agent, "admin@example.com", frozenset({"cot:read", "cot:write", "cot:admin"})
    )


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
            # Plain SELECT over the identity views shows only the caller's rows.
            _, rows = await execute_sql(
                layer, b, "SELECT agent_id, content FROM main._hatidata_cot_traces"
            )
            assert rows == [("agent-b", '"b"')]
            with pytest.raises(PgError) as perr:
                await execute_sql(layer, b, "SELECT * FROM hatidata_internal.cot_traces")
            assert perr.value.sqlstate == "42501"

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


# -- ingest ------------------------------------------------------------------------------


def test_ingest_1000_traces_but_not_1001(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            batch = [trace(i=i) for i in range(1000)]
            started = time.perf_counter()
            rows = await layer.call("ingest_traces", who(), traces=batch)
            elapsed = time.perf_counter() - started
            assert elapsed < 10, elapsed
            assert [r["step_index"] for r in rows] == list(range(1000))
            assert {r["status"] for r in rows} == {"ingested"}
            doc = ingest_document(rows)
            assert doc["ingested"] == 1000 and doc["trace_ids"][0] == batch[0]["trace_id"]
            check = await verify(layer)
            assert check["chain_valid"] and check["total_traces"] == 1000
            with pytest.raises(AgentError) as err:
                await layer.call(
                    "ingest_traces", who(), traces=[trace("s2", i=i) for i in range(1001)]
                )
            assert err.value.code == "invalid_argument" and "1000" in err.value.message
            assert [s["session_id"] for s in await history(layer)] == ["sess-1"]

    run(go())


def _bad(**change: Any) -> dict:
    t = trace(i=9)
    for key, value in change.items():
        if value is ...:
            t.pop(key)
        else:
            t[key] = value
    return t


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (_bad(content_hash="ab" * 32), "does not match"),
        (_bad(content_hash="zz"), "64 hex"),
        (_bad(trace_id="not-a-uuid"), "UUID"),
        (_bad(trace_id=...), "trace_id is required"),
        (_bad(parent_trace_id="123"), "UUID"),
        (_bad(timestamp="20th of March"), "ISO 8601"),
        (_bad(timestamp=...), "timestamp is required"),
        (_bad(trace_type="dream"), "not a known type"),
        (_bad(content=...), "content is required"),
        (_bad(session_id=""), "session_id"),
        (_bad(importance=2), "between 0 and 1"),
        (_bad(surprise=1), "unknown field"),
        ("not an object", "JSON object"),
    ],
)
def test_one_bad_trace_rejects_the_whole_batch(tmp_path: Path, bad: Any, words: str) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            batch = [trace(i=0), trace(i=1), bad, trace(i=3)]
            with pytest.raises(AgentError) as err:
                await layer.call("ingest_traces", who(), traces=batch)
            assert err.value.code == "invalid_argument"
            assert words in err.value.message and "traces[2]" in err.value.message
            assert await history(layer) == []

    run(go())


def test_ingest_accepts_common_client_hashes_and_many_sessions(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            content = {"tool": "run_sql", "input": "SELECT 1", "ü": 1.5}
            python_default = hashlib.sha256(
                json.dumps(content, sort_keys=True).encode()
            ).hexdigest()
            batch = [
                trace("s1", i=0, content=content, content_hash=python_default),
                trace(
                    "s2", i=0, content="plain", content_hash=hashlib.sha256(b"plain").hexdigest()
                ),
                trace("s1", i=1, trace_type="tool_call"),
                trace("s2", i=1, content_hash=None),
            ]
            batch[3].pop("content_hash")
            rows = await layer.call("ingest_traces", who(), traces=json.dumps({"traces": batch}))
            assert [(r["session_id"], r["step_index"]) for r in rows] == [
                ("s1", 0),
                ("s2", 0),
                ("s1", 1),
                ("s2", 1),
            ]
            # The stored hash is always the canonical one.
            assert rows[0]["content_hash"] == content_hash(content)
            for s in ("s1", "s2"):
                assert (await verify(layer, s))["chain_valid"]

    run(go())


def test_duplicate_trace_ids_are_idempotent_or_a_conflict(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            batch = [trace(i=0), trace(i=1)]
            await layer.call("ingest_traces", who(), traces=batch)
            again = await layer.call("ingest_traces", who(), traces=[*batch, trace(i=2)])
            assert [r["status"] for r in again] == ["duplicate", "duplicate", "ingested"]
            assert [r["step_index"] for r in again] == [0, 1, 2]
            assert ingest_document(again)["skipped"] == 2
            changed = dict(batch[0], content={"text": "rewritten"})
            changed["content_hash"] = content_hash(changed["content"])
            with pytest.raises(AgentError) as err:
                await layer.call("ingest_traces", who(), traces=[trace(i=5), changed])
            assert err.value.code == "conflict" and err.value.http_status == 409
            check = await verify(layer)
            assert check["chain_valid"] and check["total_traces"] == 3  # trace 5 not written
            twice = trace("s9", i=0)
            rows = await layer.call("ingest_traces", who(), traces=[twice, dict(twice)])
            assert [r["status"] for r in rows] == ["ingested", "duplicate"]
            clash = dict(twice, content="other", content_hash=content_hash("other"))
            with pytest.raises(AgentError):
                await layer.call("ingest_traces", who(), traces=[trace("s8"), clash, clash])

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


# -- tampering ---------------------------------------------------------------------------


async def _sql(layer, sql: str, params: list | None = None) -> None:
    await layer.db.run(lambda cur: cur.execute(sql, params or []))


T = "hatidata_internal.cot_traces"
WHERE = "WHERE session_id = 'sess-1' AND step_index = ?"


@pytest.mark.parametrize(
    ("edit", "broken", "field"),
    [
        (f"UPDATE {T} SET content = '\"forged\"' {WHERE}", 2, "content_hash"),
        (
            f"UPDATE {T} SET content = '\"forged\"', content_hash = sha256('\"forged\"') {WHERE}",
            2,
            "chain_hash",
        ),
        (f"UPDATE {T} SET timestamp = timestamp + INTERVAL 1 SECOND {WHERE}", 2, "chain_hash"),
        (f"UPDATE {T} SET step_type = 'decision' {WHERE}", 2, "chain_hash"),
        (f"UPDATE {T} SET importance = 1.0 {WHERE}", 2, "chain_hash"),
        (f"UPDATE {T} SET chain_hash = repeat('a', 64) {WHERE}", 2, "chain_hash"),
        (f"DELETE FROM {T} {WHERE}", 2, "step_index"),
        (f"DELETE FROM {T} WHERE session_id = 'sess-1' AND step_index >= ?", 2, "step_index"),
    ],
)
def test_tampering_is_detected_at_the_first_broken_step(
    tmp_path: Path, edit: str, broken: int, field: str
) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            logged = await steps(layer, n=5)
            assert (await verify(layer))["chain_valid"]
            await _sql(layer, edit, [2])
            check = await verify(layer)
            assert check["chain_valid"] is False
            assert check["first_broken_step"] == broken, check
            assert check["invalid_hashes"][0]["field"] == field, check
            assert f"step {broken}" in check["reason"]
            if not edit.startswith("DELETE"):
                assert check["first_broken_trace_id"] == logged[2]["trace_id"]
                rows = await layer.call(
                    "replay_decision", who(), session_id="sess-1", verify_chain=True
                )
                valid = [r["step_valid"] for r in rows]
                # A forged chain_hash also breaks the next step's link to it.
                assert valid[:3] == [True, True, False] and valid[4] is True
                assert valid[3] is ("SET chain_hash" not in edit)
                assert not any(r["chain_valid"] for r in rows)
            doc = verify_document(check)
            assert doc["chain_valid"] is False and doc["invalid_hashes"]
            assert (await history(layer))[0]["chain_valid"] is False

    run(go())


def test_forging_a_step_and_its_hashes_still_breaks_the_next_link(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await steps(layer, n=4)
            rows = await layer.call("replay_decision", who(), session_id="sess-1")
            row = rows[1]
            forged = {**row, "content": "forged"}
            forged["content_hash"] = content_hash("forged")
            forged["chain_hash"] = chain_hash(
                org_id="local",
                **{
                    k: forged[k]
                    for k in [
                        "prev_hash",
                        "content_hash",
                        "agent_id",
                        "session_id",
                        "step_index",
                        "step_type",
                        "timestamp",
                        "trace_id",
                        "parent_trace_id",
                        "metadata",
                        "importance",
                    ]
                },
            )
            await _sql(
                layer,
                f"UPDATE {T} SET content = ?::JSON, content_hash = ?, chain_hash = ? {WHERE}",
                [json.dumps("forged"), forged["content_hash"], forged["chain_hash"], 1],
            )
            check = await verify(layer)
            assert check["chain_valid"] is False and check["first_broken_step"] == 2
            assert check["invalid_hashes"][0]["field"] == "prev_hash"

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
