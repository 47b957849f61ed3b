"""Ledger tampering on a real server, as an attacker with the database file would do it:
steps logged over the wire, MCP and REST; the server stopped; sessions deleted, tails cut
(session records fixed up to match), a step edited, a session forged with valid hashes,
all with duckdb on the file; the server restarted. verify_chain and verify_ledger over
the wire, MCP and REST then name every one of them."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import json
import uuid
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import requests

from proxy.agent.ledger.hashing import GENESIS_HASH, chain_hash, content_hash
from tests.conftest import start_server
from tests.mcp.mcp_support import HttpAgent

S = "hatidata_internal"
ARGS = ("--embedding-provider", "hash")


def rows(conn: psycopg.Connection, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
    cur = conn.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def ledger_file(data_dir: Path) -> Path:
    """The DuckDB file that holds the ledger's tables (wherever the server keeps them)."""
    for path in sorted(data_dir.rglob("*.duckdb")):
        con = duckdb.connect(str(path), read_only=True)
        try:
            found = con.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? "
                "AND table_name = 'cot_traces'",
                [S],
            ).fetchone()[0]
        finally:
            con.close()
        if found:
            return path
    raise AssertionError(f"no DuckDB file under {data_dir} holds {S}.cot_traces")


def rest_trace(session: str, agent: str, i: int) -> dict[str, Any]:
    content = {"text": f"rest step {i}"}
    return {
        "trace_id": str(uuid.uuid4()),
        "session_id": session,
        "agent_id": agent,
        "timestamp": f"2026-03-20T14:00:0{i}Z",
        "trace_type": "thought",
        "content": content,
    }


def cut_tail(con: duckdb.DuckDBPyConnection, agent: str, session: str) -> None:
    """Delete a session's last step and make its session record agree."""
    (n,) = con.execute(
        f"SELECT max(step_index) FROM {S}.cot_traces WHERE agent_id = ? AND session_id = ?",
        [agent, session],
    ).fetchone()
    con.execute(
        f"DELETE FROM {S}.cot_traces WHERE agent_id = ? AND session_id = ? AND step_index = ?",
        [agent, session, n],
    )
    (last,) = con.execute(
        f"SELECT chain_hash FROM {S}.cot_traces WHERE agent_id = ? AND session_id = ? "
        "AND step_index = ?",
        [agent, session, n - 1],
    ).fetchone()
    con.execute(
        f"UPDATE {S}.cot_sessions SET total_steps = ?, head_hash = ? "
        "WHERE agent_id = ? AND session_id = ?",
        [n, last, agent, session],
    )


def delete_session(con: duckdb.DuckDBPyConnection, agent: str, session: str) -> None:
    for table in ("cot_traces", "cot_sessions"):
        con.execute(
            f"DELETE FROM {S}.{table} WHERE agent_id = ? AND session_id = ?", [agent, session]
        )


def forge_session(con: duckdb.DuckDBPyConnection, agent: str, session: str, n: int) -> None:
    """A session with every hash right, written straight into the tables."""
    prev = GENESIS_HASH
    start = dt.datetime(2026, 3, 21, 9, tzinfo=dt.UTC)
    for i in range(n):
        step = {
            "trace_id": str(uuid.uuid4()), "org_id": "local", "agent_id": agent,
            "session_id": session, "step_index": i, "step_type": "decision",
            "timestamp": start + dt.timedelta(seconds=i), "parent_trace_id": None,
            "metadata": None, "importance": 0.5, "prev_hash": prev,
            "content_hash": content_hash(f"approve refund {i}"),
        }  # fmt: skip
        link = chain_hash(**step)
        con.execute(
            f"""INSERT INTO {S}.cot_traces VALUES (?::UUID, 'local', ?, ?, ?, 'decision',
                to_json(?::VARCHAR), NULL, 0.5, ?, NULL, ?, ?, ?, now())""",
            [
                step["trace_id"], agent, session, i, f"approve refund {i}", step["timestamp"],
                step["content_hash"], prev, link,
            ],
        )  # fmt: skip
        prev = link
    con.execute(
        f"INSERT INTO {S}.cot_sessions VALUES ('local', ?, ?, ?, ?, ?, ?, now(), now())",
        [agent, session, n, prev, start, start + dt.timedelta(seconds=n - 1)],
    )


def problems_of(doc: dict[str, Any]) -> set[tuple[str | None, str]]:
    return {(p["session_id"], p["kind"]) for p in doc["problems"]}


def test_tampering_with_the_file_is_reported_over_wire_mcp_and_rest(tmp_path: Path) -> None:
    srv_dir = tmp_path
    srv = start_server(srv_dir, *ARGS)
    try:
        # -- logged through every interface ---------------------------------------------
        with srv.agent_conn("w1") as conn:
            for session, n in (("keep", 3), ("gone", 3), ("trunc", 4), ("edit", 3)):
                for i in range(n):
                    conn.execute(
                        "SELECT * FROM log_reasoning_step(%s, %s)", (session, f"{session} {i}")
                    )
        mcp = HttpAgent(srv, "m1")
        for session, n in (("m-gone", 2), ("m-trunc", 3)):
            for i in range(n):
                mcp.data("log_reasoning_step", {"session_id": session, "content": f"m {i}"})
        traces = [
            rest_trace(s, "r1", i) for s, n in (("r-gone", 2), ("r-trunc", 3)) for i in range(n)
        ]
        r = requests.post(f"{srv.rest_url}/v1/cot/ingest", json={"traces": traces}, timeout=30)
        assert r.status_code == 200, r.text

        # 8 connections append to 8 sessions at once.
        def writer(i: int) -> int:
            with srv.agent_conn("conc") as conn:
                for n in range(15):
                    conn.execute("SELECT * FROM log_reasoning_step(%s, %s)", (f"c{i}", f"{i}.{n}"))
            return i

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            assert sorted(pool.map(writer, range(8))) == list(range(8))
        with srv.agent_conn("conc") as conn:
            (summary,) = rows(conn, "SELECT * FROM verify_ledger()")
        assert summary["kind"] == "summary" and summary["ledger_valid"] is True, summary
        assert summary["sessions_checked"] == 8 and summary["steps_checked"] == 120
        whole = requests.get(f"{srv.rest_url}/v1/cot/verify", timeout=60).json()
        assert whole["ledger_valid"] is True and whole["problems"] == [], whole
        assert whole["summary"]["sessions_checked"] == 16
        assert whole["summary"]["org_chain_length"] == 13 + 5 + 5 + 120
        assert mcp.data("verify_ledger")["ledger_valid"] is True
    finally:
        srv.stop()

    # -- the attacker, with the server stopped ------------------------------------------
    con = duckdb.connect(str(ledger_file(srv_dir / "data")))
    try:
        for agent, session in (("w1", "gone"), ("m1", "m-gone"), ("r1", "r-gone")):
            delete_session(con, agent, session)
        for agent, session in (("w1", "trunc"), ("m1", "m-trunc"), ("r1", "r-trunc")):
            cut_tail(con, agent, session)
        con.execute(
            f"UPDATE {S}.cot_traces SET content = to_json('edit 9'::VARCHAR) "
            "WHERE agent_id = 'w1' AND session_id = 'edit' AND step_index = 1"
        )
        forge_session(con, "w1", "forged", 3)
    finally:
        con.close()

    srv = start_server(srv_dir, *ARGS)
    try:
        # -- the wire: agent w1 sees its own four broken sessions -------------------------
        with srv.agent_conn("w1") as conn:
            found = rows(conn, "SELECT * FROM verify_ledger()")
            assert found[-1]["kind"] == "summary" and found[-1]["ledger_valid"] is False
            assert {(p["session_id"], p["kind"]) for p in found[:-1]} == {
                ("gone", "session"),
                ("trunc", "org_chain"),
                ("edit", "content_hash"),
                ("forged", "org_chain"),
            }, found
            gone = rows(conn, "SELECT * FROM verify_chain('gone')")[0]
            assert gone["chain_valid"] is False and "session was deleted" in gone["reason"]
            trunc = rows(conn, "SELECT * FROM verify_chain('trunc')")[0]
            assert trunc["chain_valid"] is False and trunc["first_broken_step"] == 3
            assert "step 3 is missing" in trunc["reason"]
            edit = rows(conn, "SELECT * FROM verify_chain('edit')")[0]
            assert edit["chain_valid"] is False and edit["first_broken_step"] == 1
            forged = rows(conn, "SELECT * FROM verify_chain('forged')")[0]
            assert "not in the organisation chain" in forged["reason"]
            assert rows(conn, "SELECT chain_valid FROM verify_chain('keep')")[0]["chain_valid"]

        # -- MCP: agent m1 sees its own two, and nothing of w1's --------------------------
        doc = HttpAgent(srv, "m1").data("verify_ledger")
        assert doc["ledger_valid"] is False
        assert problems_of(doc) == {("m-gone", "session"), ("m-trunc", "org_chain")}, doc
        assert "forged" not in json.dumps(doc) and "w1" not in json.dumps(doc)
        replay = HttpAgent(srv, "m1").data(
            "replay_decision", {"session_id": "m-trunc", "verify_chain": True}
        )
        assert replay["chain_valid"] is False

        # -- REST: the whole organisation ---------------------------------------------------
        whole = requests.get(f"{srv.rest_url}/v1/cot/verify", timeout=60).json()
        assert whole["ledger_valid"] is False
        assert problems_of(whole) == {
            ("gone", "session"),
            ("m-gone", "session"),
            ("r-gone", "session"),
            ("trunc", "org_chain"),
            ("m-trunc", "org_chain"),
            ("r-trunc", "org_chain"),
            ("edit", "content_hash"),
            ("forged", "org_chain"),
        }, whole
        assert not any(p["session_id"].startswith("c") for p in whole["problems"])
        assert whole["summary"]["reason"] == "8 problem(s) in 8 of 17 session(s)"
        r = requests.get(f"{srv.rest_url}/v1/cot/sessions/r-gone/verify", timeout=30)
        assert r.status_code == 200, r.text  # reported, not 404 "no reasoning session"
        assert r.json()["chain_valid"] is False and "deleted" in r.json()["reason"]
        r = requests.get(f"{srv.rest_url}/v1/cot/sessions/r-trunc/verify", timeout=30).json()
        assert r["chain_valid"] is False and r["first_broken_step"] == 2
    finally:
        srv.stop()
