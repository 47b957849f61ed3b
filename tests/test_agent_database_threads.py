"""The agent layer's own DuckDB instance runs on its own thread count (agent_duckdb_threads,
default 1), apart from the users' (duckdb_threads): its statements are short, and a
worker thread there only adds a hand-off to each."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from proxy.core import config
from proxy.db.engine import Engine


def threads(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT current_setting('threads')").fetchone()[0])


@pytest.mark.parametrize(
    ("env", "users", "agent"),
    [
        ({"HATIDATA_DUCKDB_THREADS": "2"}, 2, 1),  # the default: one thread for the agent
        ({"HATIDATA_DUCKDB_THREADS": "2", "HATIDATA_AGENT_DUCKDB_THREADS": "3"}, 2, 3),
    ],
)
def test_agent_database_has_its_own_thread_count(
    tmp_path: Path, env: dict[str, str], users: int, agent: int
) -> None:
    cfg = config.load(
        None, {"HATIDATA_DATA_DIR": str(tmp_path), "HATIDATA_DATABASE": ":memory:", **env}
    )
    engine = Engine(cfg)
    try:
        assert threads(engine.db.cursor()) == users
        cur = engine.agent_db.cursor()
        assert threads(cur) == agent
        cur.close()
    finally:
        engine.close()


def test_agent_threads_zero_is_duckdbs_default(tmp_path: Path) -> None:
    default = threads(duckdb.connect(":memory:"))
    cfg = config.load(
        None,
        {
            "HATIDATA_DATA_DIR": str(tmp_path),
            "HATIDATA_DATABASE": str(tmp_path / "x.duckdb"),
            "HATIDATA_AGENT_DUCKDB_THREADS": "0",
        },
    )
    engine = Engine(cfg)
    try:
        assert threads(engine.agent_db.cursor()) == default
    finally:
        engine.close()
