"""Chain-of-thought ledger: batch ingest (all or nothing) and tamper detection by verify."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from agent_support import open_layer, run, who
from ledger_support import history, steps, trace, verify

from proxy.agent.ledger.hashing import (
    chain_hash,
    content_hash,
)
from proxy.agent.ledger.verify import ingest_document, verify_document
from proxy.core.errors import AgentError

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


def test_forging_a_step_and_its_hashes_is_caught_by_the_org_chain_and_the_next_link(
    tmp_path: Path,
) -> None:
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
            # The forged step itself no longer matches what the organisation chain
            # recorded for it, and the next step's link to it is still broken.
            assert check["chain_valid"] is False and check["first_broken_step"] == 1
            problems = {(p["step_index"], p["field"]) for p in check["invalid_hashes"]}
            assert problems == {(1, "org_chain"), (2, "prev_hash")}, check
            assert "seq 1" in check["reason"]

    run(go())
