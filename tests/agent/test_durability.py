"""Nothing acknowledged is lost: a stored memory survives `kill -9` of the server."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psycopg

from tests.conftest import ServerProcess, start_server


def _connect(srv: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(
        host=srv.host,
        port=srv.port,
        user="tester",
        dbname="hatidata",
        options="-c hatidata_agent_id=durable",
        autocommit=True,
    )


def test_memory_survives_kill_9_and_its_embedding_completes_after_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "agent.duckdb")
    common = ("--database", db, "--embedding-provider", "hash")
    # A long flush interval keeps the background embedding pending at the moment of the kill.
    srv = start_server(tmp_path / "one", *common, "--embedding-flush-interval-ms", "600000")
    try:
        with _connect(srv) as conn:
            conn.execute("SELECT * FROM set_agent_state('phase', '\"collecting\"')")
            memory_id, has_embedding = conn.execute(
                "SELECT memory_id, has_embedding FROM store_memory(%s, importance := 0.9)",
                ("the quarterly board meeting moved to Thursday",),
            ).fetchone()
            assert has_embedding is False
            conn.execute(
                "SELECT * FROM log_reasoning_step('s-dur', 'noted the meeting change')"
            ).fetchall()
    finally:
        srv.proc.send_signal(signal.SIGKILL)  # no shutdown, no checkpoint
        srv.proc.wait(10)

    srv = start_server(tmp_path / "two", *common, "--embedding-flush-interval-ms", "50")
    try:
        with _connect(srv) as conn:
            row = conn.execute(
                "SELECT content, importance FROM get_memory(%s)", (memory_id,)
            ).fetchone()
            assert row == ("the quarterly board meeting moved to Thursday", 0.9)
            assert conn.execute("SELECT value FROM get_agent_state('phase')").fetchone() == (
                "collecting",
            )
            verdict = conn.execute("SELECT chain_valid FROM verify_chain('s-dur')").fetchone()
            assert verdict == (True,)
            deadline = time.monotonic() + 30
            status = None
            while time.monotonic() < deadline:
                status = conn.execute(
                    "SELECT embedding_status FROM get_memory(%s)", (memory_id,)
                ).fetchone()[0]
                if status == "embedded":
                    break
                time.sleep(0.2)
            assert status == "embedded", srv.log()
            found = conn.execute(
                "SELECT memory_id FROM search_memory('board meeting', top_k := 3)"
            ).fetchall()
            assert (memory_id,) in found
    finally:
        srv.stop()
