"""A second server on a data directory another server holds: one line naming the database
file, the data directory and the holder's PID, a non-zero exit, and the first unharmed."""

from __future__ import annotations

import subprocess
import sys

import psycopg

from tests.conftest import ROOT, free_port, start_server


def test_second_server_on_the_same_data_directory_fails_in_one_line(tmp_path) -> None:
    first = start_server(tmp_path / "first", "--embedding-provider", "hash")
    try:
        data_dir = first.data_dir
        database = data_dir / "hatiproxy.duckdb"
        marker = database.with_name(database.name + ".hatiproxy-open")
        assert marker.read_text() == str(first.proc.pid)
        second = subprocess.run(
            [sys.executable, "-m", "proxy", "serve", "--data-dir", str(data_dir),
             "--port", str(free_port()), "--mcp-port", str(free_port()),
             "--rest-port", str(free_port()), "--embedding-provider", "hash"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert second.returncode == 1
        assert second.stdout == ""
        lines = second.stderr.splitlines()
        assert len(lines) == 1, second.stderr
        line = lines[0]
        assert line.startswith("hatiproxy: the database file ")
        assert str(database) in line and f"data directory {data_dir}" in line
        assert f"locked by process {first.proc.pid} (" in line
        assert "Traceback" not in second.stderr
        # the refused start left the running server and its clean-shutdown marker alone
        assert marker.read_text() == str(first.proc.pid)
        with psycopg.connect(first.dsn, autocommit=True) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        first.stop()
