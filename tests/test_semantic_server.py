"""Semantic SQL end to end: a real server, the real converted MiniLM model, psycopg."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server

DOCS = [
    (1, "The customer disputes a charge on their invoice"),
    (2, "Weather is sunny in Paris today"),
    (3, "Refund requested for a double billing error"),
    (4, "The football match ended in a draw"),
]


@pytest.fixture(scope="module")
def sem_server(tmp_path_factory: pytest.TempPathFactory) -> ServerProcess:
    srv = start_server(tmp_path_factory.mktemp("sem"))
    yield srv
    srv.stop()


def connect(srv: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(srv.dsn, autocommit=True)


def test_semantic_rank_orders_by_meaning(sem_server: ServerProcess) -> None:
    with connect(sem_server) as c:
        c.execute("CREATE TABLE tickets (id INT PRIMARY KEY, content TEXT)")
        c.cursor().executemany("INSERT INTO tickets VALUES (%s, %s)", DOCS)
        rows = c.execute(
            "SELECT id, semantic_rank(content, 'billing dispute') AS r FROM tickets ORDER BY r DESC"
        ).fetchall()
        assert {rows[0][0], rows[1][0]} == {1, 3}  # the two billing texts first
        assert rows[0][1] > 0.4 > rows[-1][1]
        matched = c.execute(
            "SELECT id FROM tickets WHERE semantic_match(content, 'refund', 0.5) ORDER BY id"
        ).fetchall()
        assert [r[0] for r in matched] == [3]
        weather = c.execute(
            "SELECT id FROM tickets WHERE semantic_match(content, 'weather forecast', 0.4)"
        ).fetchall()
        assert weather == [(2,)]


def test_embed_column_index_and_background_fill(sem_server: ServerProcess) -> None:
    with connect(sem_server) as c:
        c.execute("CREATE TABLE kb (id INT PRIMARY KEY, content TEXT)")
        c.cursor().executemany("INSERT INTO kb VALUES (%s, %s)", DOCS)
        assert c.execute("SELECT hatiproxy_embed_column('kb', 'content')").fetchone() == (4,)
        c.execute("INSERT INTO kb (id, content) VALUES (5, 'Invoice total is wrong')")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            n = c.execute("SELECT count(*) FROM kb WHERE content_embedding IS NULL").fetchone()
            if n == (0,):
                break
            time.sleep(0.2)
        assert n == (0,), "the background filler did not embed the new row"
        top = c.execute(
            "SELECT id FROM kb ORDER BY semantic_rank(content_embedding, 'billing dispute') DESC "
            "LIMIT 3"
        ).fetchall()
        assert {r[0] for r in top} == {1, 3, 5}
        # The vector arrives as pgvector's vector; in binary, vector_send: dim, 0, 384 floats.
        vec = c.cursor(binary=True).execute("SELECT content_embedding FROM kb WHERE id = 1")
        assert vec.description[0].type_code == 16400
        raw = vec.fetchone()[0]
        assert raw[:4] == b"\x01\x80\x00\x00" and len(raw) == 4 + 4 * 384


def test_hnsw_index_serves_top_k(sem_server: ServerProcess) -> None:
    with connect(sem_server) as c:
        c.execute("CREATE TABLE vecs (id INT, embedding FLOAT[384])")
        c.execute(
            "INSERT INTO vecs SELECT i, list_transform(range(384), x -> random())::FLOAT[384] "
            "FROM range(200) t(i)"
        )
        c.execute("CREATE INDEX vecs_hnsw ON vecs USING HNSW (embedding) WITH (metric = 'cosine')")
        cur = c.execute(
            "EXPLAIN SELECT id FROM vecs ORDER BY semantic_rank(embedding, 'anything') DESC LIMIT 5"
        )
        # Postgres's shape: one "QUERY PLAN" column, a row per line of DuckDB's plan.
        assert [d.name for d in cur.description] == ["QUERY PLAN"]
        plan = "\n".join(r[0] for r in cur.fetchall())
        assert "HNSW_INDEX_SCAN" in plan
        rows = c.execute(
            "SELECT id FROM vecs ORDER BY semantic_rank(embedding, 'anything') DESC LIMIT 5"
        ).fetchall()
        assert len(rows) == 5


def test_hatidata_context_bm25(sem_server: ServerProcess) -> None:
    with connect(sem_server) as c:
        c.execute("CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)")
        c.cursor().executemany("INSERT INTO notes VALUES (%s, %s)", DOCS)
        rows = c.execute("SELECT id FROM hatidata_context('notes', 'refund billing', 2)").fetchall()
        assert rows[0][0] == 3
        c.execute("INSERT INTO notes VALUES (9, 'refund refund refund please')")
        rows = c.execute("SELECT id FROM hatidata_context('notes', 'refund', 1)").fetchall()
        assert rows == [(9,)]  # the index was refreshed for the new row


def test_default_threshold_is_the_models(sem_server: ServerProcess) -> None:
    """Without a threshold: all-MiniLM-L6-v2's calibrated 0.33 (registry), not 0.7."""
    assert "semantic_match default threshold 0.33" in sem_server.log()
    with connect(sem_server) as c:
        c.execute("CREATE TABLE thr (id INT PRIMARY KEY, content TEXT)")
        c.cursor().executemany("INSERT INTO thr VALUES (%s, %s)", DOCS)
        query = "customer wants a refund"
        scores = dict(c.execute("SELECT id, semantic_rank(content, %s) FROM thr", [query]))
        assert max(scores.values()) < 0.7  # the old default found nothing
        for sql in (
            "SELECT id FROM thr WHERE semantic_match(content, %s) ORDER BY id",
            "SELECT id FROM thr WHERE vector_match(content, %s) ORDER BY id",
        ):
            found = [r[0] for r in c.execute(sql, [query])]
            assert found == [1, 3] == sorted(i for i, s in scores.items() if s >= 0.33)
        joined = c.execute(
            "SELECT t.id FROM (SELECT %s AS q) s JOIN_VECTOR thr t "
            "ON semantic_match(t.content, s.q) ORDER BY t.id",
            [query],
        ).fetchall()
        assert joined == [(1,), (3,)]


@pytest.mark.parametrize(
    ("threshold", "params", "shown"),
    [
        ("1.5", None, "not 1.5"),
        ("-2", None, "not -2"),
        ("%s", [1.5], "not 1.5"),  # a parameter: checked when the statement runs
        ("%s", [-2.0], "not -2"),
        ("%s", [float("nan")], "not nan"),
    ],
)
def test_threshold_out_of_range_is_22023(
    sem_server: ServerProcess, threshold: str, params: list | None, shown: str
) -> None:
    with connect(sem_server) as c:
        c.execute("CREATE TABLE IF NOT EXISTS rng (id INT PRIMARY KEY, content TEXT)")
        c.execute("INSERT INTO rng VALUES (1, 'refund please') ON CONFLICT DO NOTHING")
        with pytest.raises(psycopg.Error) as info:
            c.execute(f"SELECT id FROM rng WHERE semantic_match(content, 'x', {threshold})", params)
        assert info.value.sqlstate == "22023"
        message = info.value.diag.message_primary or ""
        assert "threshold must be between -1 and 1 (a cosine similarity)" in message
        assert message.endswith(shown)
        # the ends of the range are valid, and the session goes on
        for ok in (-1.0, 1.0):
            c.execute("SELECT id FROM rng WHERE semantic_match(content, 'x', %s)", [ok])
        assert c.execute(
            "SELECT id FROM rng WHERE semantic_match(content, 'refund please', -1)"
        ).fetchall() == [(1,)]


def test_no_model_gives_58000_and_plain_sql_works(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--database", ":memory:", "--embedding-model", "no-such-model")
    try:
        with connect(srv) as c:
            assert c.execute("SELECT 41 + 1").fetchone() == (42,)
            c.execute("CREATE TABLE t (content TEXT)")
            with pytest.raises(psycopg.Error) as info:
                c.execute("SELECT * FROM t WHERE semantic_match(content, 'x')")
            assert info.value.sqlstate == "58000"
            assert "hatiproxy model" in str(info.value.diag.message_hint)
    finally:
        srv.stop()


def test_hnsw_index_survives_restart_and_crash(tmp_path: Path) -> None:
    srv = start_server(tmp_path)
    with connect(srv) as c:
        c.execute("CREATE TABLE docs (id INT PRIMARY KEY, content TEXT)")
        c.cursor().executemany("INSERT INTO docs VALUES (%s, %s)", DOCS)
        c.execute("SELECT hatiproxy_embed_column('docs', 'content')")
    srv.proc.send_signal(signal.SIGKILL)  # unclean: the index must be rebuilt at start
    srv.proc.wait(10)
    srv = start_server(tmp_path)
    try:
        assert "rebuilt HNSW index" in srv.log() or _wait_log(srv, "rebuilt HNSW index")
        log = srv.log()  # the wait is reported before it starts, its length after it ends
        assert "INFO hatiproxy.engine: rebuilding HNSW index docs_content_embedding_hnsw" in log
        assert re.search(r"rebuilt HNSW index docs_content_embedding_hnsw .*\(\d+\.\d s\)", log)
        with connect(srv) as c:
            indexes = c.execute(
                "SELECT count(*) FROM duckdb_indexes() WHERE sql ILIKE '%USING HNSW%'"
            ).fetchone()
            assert indexes == (1,)
            top = c.execute(
                "SELECT id FROM docs ORDER BY semantic_rank(content_embedding, 'invoice charge') "
                "DESC LIMIT 1"
            ).fetchone()
            assert top == (1,)
    finally:
        srv.stop()


def _wait_log(srv: ServerProcess, text: str, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in srv.log():
            return True
        time.sleep(0.1)
    return False
