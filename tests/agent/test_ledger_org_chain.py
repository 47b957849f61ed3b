"""The organisation chain: what a per-session chain alone cannot show (a deleted session,
deleted last steps, a step re-hashed after an edit, a forged session) is found by
verify_chain and verify_ledger. Tampering here is what raw database access allows: SQL on
the server's own database handle, bypassing every agent function."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import uuid
from pathlib import Path
from typing import Any

import duckdb
import pytest
from agent_support import open_layer, run, who
from ledger_support import admin, steps, verify

from proxy.agent.ledger import append as ledger_append
from proxy.agent.ledger.hashing import GENESIS_HASH, chain_hash, content_hash
from proxy.agent.ledger.inputs import Trace
from proxy.agent.ledger.verify import ledger_document
from proxy.core.errors import AgentError

S = "hatidata_internal"


async def sql(layer, text: str, params: list | None = None) -> list[tuple]:
    def go(cur):
        res = cur.execute(text, params or [])
        return res.fetchall() if res.description else []

    return await layer.db.run(go)


async def ledger(layer, identity=None) -> dict[str, Any]:
    return ledger_document(await layer.call("verify_ledger", identity or admin()))


def kinds(doc: dict[str, Any]) -> set[tuple[str | None, str]]:
    return {(p["session_id"], p["kind"]) for p in doc["problems"]}


async def truncate_like_an_attacker(layer, session: str, keep: int) -> None:
    """Delete a session's steps from `keep` on and make its session record agree."""
    await sql(
        layer,
        f"DELETE FROM {S}.cot_traces WHERE session_id = ? AND step_index >= ?",
        [session, keep],
    )
    (last,) = await sql(
        layer,
        f"SELECT chain_hash FROM {S}.cot_traces WHERE session_id = ? AND step_index = ?",
        [session, keep - 1],
    )
    await sql(
        layer,
        f"UPDATE {S}.cot_sessions SET total_steps = ?, head_hash = ? WHERE session_id = ?",
        [keep, last[0], session],
    )


def forged_steps(session: str, n: int, agent: str = "agent-a") -> list[dict[str, Any]]:
    """Steps with every hash correct, as someone who read hashing.py would write them."""
    out, prev = [], GENESIS_HASH
    for i in range(n):
        ts = dt.datetime(2026, 3, 21, 9, tzinfo=dt.UTC) + dt.timedelta(seconds=i)
        row = {
            "trace_id": str(uuid.uuid4()),
            "org_id": "local",
            "agent_id": agent,
            "session_id": session,
            "step_index": i,
            "step_type": "decision",
            "content": f"forged {i}",
            "metadata": None,
            "importance": 0.5,
            "timestamp": ts,
            "parent_trace_id": None,
        }
        row["content_hash"] = content_hash(row["content"])
        row["prev_hash"] = prev
        fields = (
            "prev_hash", "content_hash", "org_id", "agent_id", "session_id", "step_index",
            "step_type", "timestamp", "trace_id", "parent_trace_id", "metadata", "importance",
        )  # fmt: skip
        row["chain_hash"] = prev = chain_hash(**{k: row[k] for k in fields})
        out.append(row)
    return out


async def insert_forged(layer, session: str, n: int = 3) -> None:
    rows = forged_steps(session, n)
    for r in rows:
        await sql(
            layer,
            f"""INSERT INTO {S}.cot_traces VALUES (?::UUID, ?, ?, ?, ?, ?, to_json(?::VARCHAR),
                NULL, ?, ?, NULL, ?, ?, ?, now())""",
            [
                r["trace_id"], r["org_id"], r["agent_id"], session, r["step_index"],
                r["step_type"], r["content"], r["importance"], r["timestamp"],
                r["content_hash"], r["prev_hash"], r["chain_hash"],
            ],
        )  # fmt: skip
    await sql(
        layer,
        f"INSERT INTO {S}.cot_sessions VALUES ('local', 'agent-a', ?, ?, ?, ?, ?, now(), now())",
        [session, n, rows[-1]["chain_hash"], rows[0]["timestamp"], rows[-1]["timestamp"]],
    )


def test_deleted_session_truncated_tail_rehashed_edit_and_forged_session(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            for name, n in (("keep", 3), ("gone", 3), ("trunc", 4), ("rehash", 3)):
                await steps(layer, name, n=n)
            clean = await ledger(layer)
            assert clean["ledger_valid"] and clean["problems"] == [], clean
            assert clean["summary"]["sessions_checked"] == 4
            assert clean["summary"]["steps_checked"] == clean["summary"]["org_chain_length"] == 13

            # 1. A whole session, its steps and its session record.
            await sql(layer, f"DELETE FROM {S}.cot_traces WHERE session_id = 'gone'")
            await sql(layer, f"DELETE FROM {S}.cot_sessions WHERE session_id = 'gone'")
            # 2. The last step, with the session record made to agree.
            await truncate_like_an_attacker(layer, "trunc", keep=3)
            # 3. The last step edited, every hash of it and the session head recomputed.
            row = (await layer.call("replay_decision", who(), session_id="rehash"))[2]
            forged = {**row, "content": "forged", "content_hash": content_hash("forged")}
            new_hash = chain_hash(
                org_id="local",
                **{k: forged[k] for k in (
                    "prev_hash", "content_hash", "agent_id", "session_id", "step_index",
                    "step_type", "timestamp", "trace_id", "parent_trace_id", "metadata",
                    "importance",
                )},
            )  # fmt: skip
            await sql(
                layer,
                f"UPDATE {S}.cot_traces SET content = to_json('forged'::VARCHAR), "
                "content_hash = ?, chain_hash = ? WHERE session_id = 'rehash' AND step_index = 2",
                [forged["content_hash"], new_hash],
            )
            await sql(
                layer,
                f"UPDATE {S}.cot_sessions SET head_hash = ? WHERE session_id = 'rehash'",
                [new_hash],
            )
            # 4. A session that never went through the ledger, with valid hashes.
            await insert_forged(layer, "forged")

            check = await verify(layer, "gone")  # reported, not "no reasoning session"
            assert check["chain_valid"] is False and "deleted" in check["reason"], check
            assert "3 step(s)" in check["reason"]
            check = await verify(layer, "trunc")
            assert check["chain_valid"] is False and check["first_broken_step"] == 3, check
            assert check["reason"].startswith("step 3 is missing"), check
            check = await verify(layer, "rehash")
            assert check["chain_valid"] is False and check["first_broken_step"] == 2, check
            assert "organisation chain recorded" in check["reason"]
            check = await verify(layer, "forged")
            assert (
                check["chain_valid"] is False and "not in the organisation chain" in check["reason"]
            ), check
            assert (await verify(layer, "keep"))["chain_valid"]

            doc = await ledger(layer)
            assert doc["ledger_valid"] is False
            assert kinds(doc) == {
                ("gone", "session"),
                ("trunc", "org_chain"),
                ("rehash", "org_chain"),
                ("forged", "org_chain"),
            }, doc
            by = {p["session_id"]: p for p in doc["problems"]}
            assert by["trunc"]["step_index"] == 3 and by["trunc"]["seq"] == 9
            assert by["gone"]["seq"] == 3 and by["forged"]["seq"] is None
            assert doc["summary"]["sessions_checked"] == 5
            assert doc["summary"]["reason"] == "4 problem(s) in 4 of 5 session(s)"
            listed = {
                s["session_id"]: s["chain_valid"]
                for s in await layer.call("get_session_history", admin())
            }
            assert listed == {"keep": True, "trunc": False, "rehash": False, "forged": False}

    run(go())


def test_removing_the_org_chain_tail_and_head_is_caught_while_the_server_runs(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await steps(layer, "a", n=2)
            await steps(layer, "b", n=2)
            # Everything of session b, in every table, and the head moved back to match.
            (head,) = await sql(layer, f"SELECT org_hash FROM {S}.cot_org_chain WHERE seq = 1")
            for table in ("cot_traces", "cot_sessions", "cot_org_chain"):
                await sql(layer, f"DELETE FROM {S}.{table} WHERE session_id = 'b'")
            await sql(layer, f"UPDATE {S}.cot_org_heads SET entries = 2, head_hash = ?", [head[0]])
            doc = await ledger(layer)
            assert kinds(doc) == {(None, "org_head")}, doc
            assert (
                "no longer holds the head this server wrote (seq 3" in doc["problems"][0]["reason"]
            )
            # Without the head moved back, the stored head says so as well.
            await sql(layer, f"UPDATE {S}.cot_org_heads SET entries = 4")
            reasons = " | ".join(p["reason"] for p in (await ledger(layer))["problems"])
            assert "head records 4 entries, the chain holds 2" in reasons

    run(go())


def test_a_gap_in_the_middle_of_the_org_chain(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await steps(layer, "a", n=2)
            await steps(layer, "b", n=2)
            await steps(layer, "c", n=2)
            for table in ("cot_traces", "cot_sessions", "cot_org_chain"):
                await sql(layer, f"DELETE FROM {S}.{table} WHERE session_id = 'b'")
            doc = await ledger(layer)
            problems = doc["problems"]
            assert [p["kind"] for p in problems] == ["org_chain"], doc
            assert "entries 2 to 3 missing" in problems[0]["reason"] and problems[0]["seq"] == 2

    run(go())


def test_an_agent_sees_its_own_sessions_and_org_breaks_without_other_names(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await steps(layer, "mine", n=2, agent="agent-b")
            await steps(layer, "secret-plan", n=2)
            await sql(layer, f"DELETE FROM {S}.cot_traces WHERE session_id = 'secret-plan'")
            await sql(layer, f"DELETE FROM {S}.cot_sessions WHERE session_id = 'secret-plan'")
            doc = await ledger(layer, who("agent-b"))
            assert doc["ledger_valid"] is True and doc["summary"]["sessions_checked"] == 1
            assert "secret-plan" not in str(doc)
            await sql(layer, f"DELETE FROM {S}.cot_org_chain WHERE session_id = 'secret-plan'")
            doc = await ledger(layer, who("agent-b"))
            assert doc["ledger_valid"] is False and "secret-plan" not in str(doc), doc
            assert [(p["kind"], p["session_id"], p["agent_id"]) for p in doc["problems"]] == [
                ("org_head", None, None),
                ("org_head", None, None),
            ]
            own = await ledger(layer, who("agent-a"))
            assert ("secret-plan", "session") not in kinds(own)  # its entries are gone too

    run(go())


def test_an_upgraded_ledger_is_chained_at_start_without_false_tampering(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = str(tmp_path / "ledger.duckdb")

    async def before() -> None:
        async with open_layer(tmp_path, database=db) as layer:
            await steps(layer, "old-1", n=3)
            await steps(layer, "old-2", n=2, agent="agent-b")
            await steps(layer, "old-broken", n=2)

    async def after() -> None:
        async with open_layer(tmp_path, database=db) as layer:
            doc = await ledger(layer)
            assert kinds(doc) == {("old-broken", "content_hash")}, doc
            assert doc["summary"]["org_chain_length"] == 7
            assert (await verify(layer, "old-1"))["chain_valid"]
            await steps(layer, "new", n=2)  # appends continue the rebuilt chain
            doc = await ledger(layer)
            assert kinds(doc) == {("old-broken", "content_hash")}
            assert doc["summary"]["org_chain_length"] == 9
            # The rebuild happens once: a later start does not launder a deletion.
        async with open_layer(tmp_path, database=db) as layer:
            await sql(layer, f"DELETE FROM {S}.cot_traces WHERE session_id = 'new'")
            await sql(layer, f"DELETE FROM {S}.cot_sessions WHERE session_id = 'new'")
        async with open_layer(tmp_path, database=db) as layer:
            assert ("new", "session") in kinds(await ledger(layer))

    run(before())
    # The ledger as an older server left it: no organisation chain; one session edited.
    con = duckdb.connect(db.removesuffix(".duckdb") + ".agent.duckdb")  # the ledger's file
    con.execute(f"DROP TABLE {S}.cot_org_chain")
    con.execute(f"DROP TABLE {S}.cot_org_heads")
    con.execute(
        f"UPDATE {S}.cot_traces SET content = to_json('x'::VARCHAR) "
        "WHERE session_id = 'old-broken' AND step_index = 1"
    )
    con.close()
    with caplog.at_level(logging.INFO, logger="hatiproxy.agent.ledger"):
        run(after())
    assert "7 existing steps chained" in caplog.text
    assert "agent-a/old-broken: step 1: content does not match" in caplog.text


def test_concurrent_appends_keep_one_chain_even_past_the_org_lock(tmp_path: Path) -> None:
    """8 writers of 8 sessions at once: through the ledger (serialised per organisation),
    and straight into DuckDB's optimistic concurrency (conflicts abort, the retry
    recomputes): one valid organisation chain either way."""

    async def go() -> None:
        async with open_layer(tmp_path) as layer:

            async def writer(i: int) -> None:
                for _ in range(10):
                    await layer.call(
                        "log_reasoning_step", who(), session_id=f"c{i}", content=f"w{i}"
                    )

            await asyncio.gather(*(writer(i) for i in range(8)))

            async def raw_writer(i: int) -> None:  # no session or org lock
                for n in range(10):
                    t = Trace(
                        trace_id=str(uuid.uuid4()), session_id=f"raw{i}", agent_id="agent-a",
                        timestamp=dt.datetime.now(dt.UTC), step_type="thought",
                        content=f"r{i}.{n}", content_hash=content_hash(f"r{i}.{n}"),
                        parent_trace_id=None, metadata=None, importance=None,
                    )  # fmt: skip
                    await layer.ledger._retry(
                        lambda t=t: layer.db.transaction(
                            lambda cur: ledger_append.append_tx(cur, who(), [t])
                        ),
                        attempts=200,
                    )

            await asyncio.gather(*(raw_writer(i) for i in range(8)))
            doc = await ledger(layer)
            assert doc["ledger_valid"], doc
            assert doc["summary"]["org_chain_length"] == doc["summary"]["steps_checked"] == 160
            seqs = await sql(layer, f"SELECT seq FROM {S}.cot_org_chain ORDER BY seq")
            assert [s[0] for s in seqs] == list(range(160))

    run(go())


def test_an_append_that_keeps_conflicting_is_a_conflict_error(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            tries = []

            async def clash() -> None:
                tries.append(1)
                raise duckdb.TransactionException("TransactionContext Error: Conflict on update!")

            with pytest.raises(AgentError) as err:
                await layer.ledger._retry(clash, attempts=3)
            assert len(tries) == 3 and err.value.code == "conflict"
            assert err.value.sqlstate == "55000" and "verify_ledger" in err.value.hint

    run(go())
