"""The `_hatidata_*` relations are cached per caller (proxy/execution/relation_cache.py);
what the agent layer writes must still show in the very next statement, on any
connection and through any interface, and a session's own transaction or DDL never
leaves it with a missing or stale relation."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
import requests

from tests.conftest import ServerProcess, start_server

COUNT = "SELECT count(*) FROM _hatidata_agent_memory"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_server(tmp_path_factory.mktemp("relcache"), "--embedding-provider", "hash")
    yield server
    server.stop()


def count(con: psycopg.Connection) -> int:
    return con.execute(COUNT).fetchone()[0]


def test_every_agent_write_shows_in_the_next_statement(srv: ServerProcess) -> None:
    with (
        srv.agent_conn("rc", user="postgres") as reader,
        srv.agent_conn("rc", user="postgres") as writer,
        srv.agent_conn("rc2", user="postgres") as other,
    ):
        for _ in range(3):  # cached now
            assert count(reader) == 0
        assert count(other) == 0
        writer.execute("SELECT * FROM store_memory('first')")
        assert count(reader) == 1
        other.execute("SELECT * FROM store_memory('not rc''s')")
        assert count(reader) == 1 and count(other) == 1  # per caller
        url = f"http://127.0.0.1:{srv.rest_port}/v1/organizations/local/agent-memory"
        body = {"agent_id": "rc", "memory_type": "semantic", "content": "over REST"}
        assert requests.post(url, json=body, timeout=30).status_code in (200, 201)
        assert count(reader) == 2  # written by another interface
        (memory_id,) = reader.execute(
            "SELECT memory_id FROM _hatidata_agent_memory WHERE content = 'first'"
        ).fetchone()
        writer.execute("SELECT * FROM delete_memory(%s)", [str(memory_id)])
        assert count(reader) == 1
        assert [r[0] for r in reader.execute("SELECT content FROM _hatidata_agent_memory")] == [
            "over REST"
        ]
        state = "SELECT value::VARCHAR FROM _hatidata_agent_state WHERE key = 'k'"
        writer.execute("SELECT * FROM set_agent_state('k', '1')")
        assert reader.execute(state).fetchone() == ("1",)
        writer.execute("SELECT * FROM set_agent_state('k', '2')")
        assert reader.execute(state).fetchone() == ("2",)


def test_a_rolled_back_block_or_a_dropped_view_leaves_the_relation_working(
    srv: ServerProcess,
) -> None:
    with (
        srv.agent_conn("rb", user="postgres") as con,
        srv.agent_conn("rb", user="postgres") as writer,
    ):
        writer.execute("SELECT * FROM store_memory('one')")
        assert count(con) == 1
        con.execute("BEGIN")
        assert count(con) == 1
        writer.execute("SELECT * FROM store_memory('two')")
        assert count(con) == 2  # the agent database is not the block's snapshot
        con.execute("ROLLBACK")
        assert count(con) == 2
        assert count(con) == 2
        con.execute("BEGIN")
        con.execute("CREATE TEMP TABLE rb_t AS SELECT * FROM _hatidata_agent_memory")
        con.execute("ROLLBACK")
        assert count(con) == 2
        # trust mode's superuser may drop its own session's view: the next statement
        # shows the relation again
        con.execute("DROP VIEW IF EXISTS temp.main._hatidata_agent_memory")
        assert count(con) == 2
        assert con.execute("SELECT 1").fetchone() == (1,)  # not named: taken away
        assert count(con) == 2


def test_agent_call_results_are_each_calls_own_on_a_reused_view(srv: ServerProcess) -> None:
    """An agent call's typed view stays registered between statements (only its rows
    are replaced): every call must still return its own rows, after a call with other
    columns in the same place, a rolled-back block, or a dropped view."""
    search = "SELECT content FROM search_memory(%s, 1)"
    with srv.agent_conn("ac", user="postgres") as con:
        for text in ("apples are red", "the sea is blue", "grass is green"):
            con.execute("SELECT * FROM store_memory(%s, wait := true)", [text])
        for _ in range(2):
            assert con.execute(search, ["apples are red"]).fetchone() == ("apples are red",)
            assert con.execute(search, ["the sea is blue"]).fetchone() == ("the sea is blue",)
        con.execute("SELECT * FROM set_agent_state('k', '7')")
        state = "SELECT value::VARCHAR FROM get_agent_state('k')"
        assert con.execute(state).fetchone() == ("7",)  # other columns, same place
        assert con.execute(search, ["grass is green"]).fetchone() == ("grass is green",)
        con.execute("BEGIN")
        assert con.execute(search, ["apples are red"]).fetchone() == ("apples are red",)
        con.execute("ROLLBACK")
        assert con.execute(search, ["the sea is blue"]).fetchone() == ("the sea is blue",)
        con.execute("DROP VIEW IF EXISTS temp.main.__hati_agent_0")
        assert con.execute(search, ["grass is green"]).fetchone() == ("grass is green",)


def test_agent_call_results_stay_right_as_their_row_count_changes(srv: ServerProcess) -> None:
    """A call of many rows keeps its view reading registered Arrow rows and later calls
    only register their rows anew (sql_bridge.replace_rows): each call, of 1, 0 or 5 rows,
    still returns exactly its own rows, also after the view or its rows were dropped."""
    search = "SELECT content FROM search_memory(%s, %s, memory_type := %s) ORDER BY content"
    with srv.agent_conn("rows", user="postgres") as con:
        texts = [f"fruit number {i} is ripe" for i in range(6)]
        for text in texts:
            con.execute(
                "SELECT * FROM store_memory(%s, memory_type := 'fact', wait := true)", [text]
            )

        def got(query: str, k: int, kind: str = "fact") -> list[str]:
            return [r[0] for r in con.execute(search, [query, k, kind])]

        for _ in range(2):
            assert len(set(got("fruit ripe", 5)) & set(texts)) == 5
            assert got(texts[2], 1) == [texts[2]]
            assert got("fruit ripe", 5, "none") == []
            assert got(texts[4], 1) == [texts[4]]
        assert len(got("fruit ripe", 5)) == 5
        con.execute("DROP VIEW IF EXISTS temp.main.__hati_agent_0")
        assert got(texts[3], 1) == [texts[3]]
        assert len(got("fruit ripe", 5)) == 5
        con.execute("DROP VIEW IF EXISTS temp.main.__hati_agent_0_rows")
        assert len(got("fruit ripe", 5)) == 5
        assert got(texts[5], 1) == [texts[5]]
