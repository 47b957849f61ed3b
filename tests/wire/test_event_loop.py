"""The server runs on uvloop by default and on asyncio's own loop when configured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ROOT, start_server


def _exercise(port: int) -> None:
    """Extended protocol, a COPY round trip and a cancelled statement on one connection."""
    dsn = f"host=127.0.0.1 port={port} user=loop dbname=hatidata"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id integer PRIMARY KEY, v text)")
        with conn.cursor().copy("COPY t FROM STDIN") as copy:
            for i in range(100):
                copy.write_row((i, f"v{i}"))
        assert conn.execute("SELECT v FROM t WHERE id = %s", (42,)).fetchone() == ("v42",)
        conn.execute("SET statement_timeout = '200ms'")
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("SELECT count(*) FROM range(10000000000)")
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (100,)


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_server_serves_on_each_event_loop(tmp_path: Path, loop: str) -> None:
    args = () if loop == "uvloop" else ("--event-loop", "asyncio")
    server = start_server(tmp_path, *args)
    try:
        _exercise(server.port)
    finally:
        server.stop()
    assert f"event loop: {loop}" in server.log()


def test_unknown_event_loop_is_refused_before_start(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "proxy", "serve", "--event-loop", "trio",
         "--data-dir", str(tmp_path), "--port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "unknown event_loop 'trio': expected uvloop or asyncio" in proc.stderr
