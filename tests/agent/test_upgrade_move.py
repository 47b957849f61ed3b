"""Upgrade without loss: a data directory made by the version that kept agent data in the
users' file (schema hatidata_internal, main._hatidata_* views, the embedding cache in
main) is moved into the agent database at start, and nothing is lost, also when the
move stopped half way.

The old data directory was made by the old code itself (commit a5bd59d, the last with
the old layout, run as a server by tests/agent/fixtures/make_old_layout.py) and is kept
in tests/agent/fixtures, so the test needs no git history.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from tests.conftest import start_server

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _connect(port: int, key: str) -> psycopg.Connection:
    return psycopg.connect(
        host="127.0.0.1", port=port, user="agent-a", password=key, dbname="main", autocommit=True
    )


def read_back(conn: psycopg.Connection) -> dict[str, list]:
    """What a client reads of the agent data (as JSON types: lists, not tuples)."""
    return json.loads(
        json.dumps(
            {
                "memory": conn.execute(
                    "SELECT content FROM _hatidata_agent_memory ORDER BY created_at"
                ).fetchall(),
                "state": conn.execute("SELECT key, value FROM _hatidata_agent_state").fetchall(),
                "steps": conn.execute(
                    "SELECT step_index, content FROM _hatidata_cot_traces ORDER BY step_index"
                ).fetchall(),
                "triggers": conn.execute("SELECT name FROM _hatidata_triggers").fetchall(),
                "chain": conn.execute("SELECT chain_valid FROM verify_chain('s-old')").fetchall(),
                # The top hit only: whether the other memory follows depends on whether
                # its re-embedding at start (another model) has finished yet.
                "search": conn.execute("SELECT content FROM search_memory('mangoes')").fetchall()[
                    :1
                ],
                "users": conn.execute("SELECT * FROM user_table").fetchall(),
            }
        )
    )


@pytest.fixture(scope="module")
def old_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, dict]]:
    """A data directory written by the old server (tests/agent/fixtures/make_old_layout.py
    made it from commit a5bd59d): a key, memories, state, ledger, a trigger and a user
    table; and what the old server read back."""
    base = tmp_path_factory.mktemp("old")
    with tarfile.open(FIXTURES / "old_layout_a5bd59d.tar.gz") as tar:
        tar.extractall(base, filter="data")
    made = json.loads((FIXTURES / "old_layout_a5bd59d.json").read_text())
    data = base / "data"
    assert (data / "hatiproxy.duckdb").exists()
    assert not (data / "hatiproxy.agent.duckdb").exists()
    yield data, made["key"], made["before"]


def _check_users_file(data: Path) -> None:
    con = duckdb.connect(str(data / "hatiproxy.duckdb"), read_only=True)
    try:
        schemas = {r[0] for r in con.execute("SELECT schema_name FROM duckdb_schemas()").fetchall()}
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    finally:
        con.close()
    assert "hatidata_internal" not in schemas
    assert "_hatidata_embedding_cache" not in tables
    assert "user_table" in tables
    assert not {v for v in views if v.startswith("_hatidata_")}


def _start_new(tmp: Path, data: Path):
    shutil.copytree(data, tmp / "data")
    return start_server(tmp, "--embedding-provider", "hash")


def test_the_new_server_moves_everything_and_reads_it_back(old_data, tmp_path: Path) -> None:
    data, key, before = old_data
    srv = _start_new(tmp_path, data)
    try:
        with _connect(srv.port, key) as conn:  # the key moved too: it still logs in
            assert read_back(conn) == before
            # The moved sequence continues: a new memory gets a fresh seq, search finds all.
            conn.execute("SELECT * FROM store_memory('a new memory after the move')")
            assert len(conn.execute("SELECT 1 FROM _hatidata_agent_memory").fetchall()) == 3
    finally:
        srv.stop()
    log = srv.log()
    assert "moved hatidata_internal.agent_memory (2 rows)" in log, log
    assert "removed the old agent schema" in log
    _check_users_file(srv.data_dir)
    # A second start has nothing left to move and still reads everything.
    srv = start_server(tmp_path, "--embedding-provider", "hash")
    try:
        with _connect(srv.port, key) as conn:
            assert read_back(conn)["memory"][:2] == before["memory"]
    finally:
        srv.stop()
    assert "moved" not in srv.log()


def test_a_move_stopped_after_the_copy_loses_and_doubles_nothing(old_data, tmp_path) -> None:
    """The state a crash between the two commits leaves: the agent file has everything
    (and the marker), the users' file still has the old schema. The next start only drops."""
    from proxy.db import agent_move

    data, key, before = old_data
    shutil.copytree(data, tmp_path / "data")
    users = duckdb.connect(str(tmp_path / "data" / "hatiproxy.duckdb"))
    agent = duckdb.connect(str(tmp_path / "data" / "hatiproxy.agent.duckdb"))
    try:
        agent_move._copy(users, agent, agent_move._old_tables(users))  # then "crash"
    finally:
        users.close()
        agent.close()
    srv = start_server(tmp_path, "--embedding-provider", "hash")
    try:
        with _connect(srv.port, key) as conn:
            assert read_back(conn) == before  # each row once
    finally:
        srv.stop()
    assert "agent data was moved before" in srv.log()
    _check_users_file(srv.data_dir)
