"""Catalog hints over the wire: a real server, the real converted MiniLM model, psycopg.

Vector columns of any name get the HNSW plan; a text column set up with
hatiproxy_embed_column is searched through its embedding column, and rows the
background filler has not embedded yet (its interval is 10 minutes here) are still
found by semantic_match. Also: nested semantic calls and text expressions as search
arguments, and the error for an argument that cannot be told apart.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.test_semantic_server import DOCS, connect


@pytest.fixture(scope="module")
def hints_server(tmp_path_factory: pytest.TempPathFactory) -> ServerProcess:
    srv = start_server(
        tmp_path_factory.mktemp("hints"),
        "--database",
        ":memory:",
        "--embedding-flush-interval-ms",
        "600000",
    )
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def docs(hints_server: ServerProcess) -> ServerProcess:
    """`docs` with content embedded by hatiproxy_embed_column, plus row 5 added after."""
    with connect(hints_server) as c:
        c.execute("CREATE TABLE docs (id INT PRIMARY KEY, content TEXT)")
        c.cursor().executemany("INSERT INTO docs VALUES (%s, %s)", DOCS)
        assert c.execute("SELECT hatiproxy_embed_column('docs', 'content')").fetchone() == (4,)
        c.execute(
            "INSERT INTO docs (id, content) VALUES (5, 'Invoice total is wrong, overcharged')"
        )
    return hints_server


def plan(c: psycopg.Connection, sql: str) -> str:
    return "\n".join(row[0] for row in c.execute("EXPLAIN " + sql).fetchall())


def test_vector_column_without_a_vector_name_uses_hnsw(hints_server: ServerProcess) -> None:
    with connect(hints_server) as other, connect(hints_server) as c:
        # Another session builds the hints first: the DDL below must refresh them.
        other.execute("SELECT semantic_rank(v.x, 'warm up') FROM (SELECT 'a' AS x) v").fetchall()
        c.execute("CREATE TABLE items (id INT, features FLOAT[384])")
        c.execute(
            "INSERT INTO items SELECT i, list_transform(range(384), x -> random())::FLOAT[384] "
            "FROM range(200) t(i)"
        )
        c.execute("CREATE INDEX items_hnsw ON items USING HNSW (features) WITH (metric = 'cosine')")
        sql = "SELECT id FROM items ORDER BY semantic_rank(features, 'q') DESC LIMIT 3"
        assert "HNSW_INDEX_SCAN" in plan(other, sql)
        assert len(other.execute(sql).fetchall()) == 3


def test_embedded_text_column_is_read_not_embedded_again(docs: ServerProcess) -> None:
    with connect(docs) as c:
        row5 = c.execute("SELECT content_embedding IS NULL FROM docs WHERE id = 5").fetchone()
        assert row5 == (True,), "row 5 must still wait for the background filler"
        sql = (
            "SELECT id FROM docs WHERE semantic_match(content, 'billing dispute', 0.45) ORDER BY id"
        )
        shown = plan(c, sql)
        assert "content_embedding" in shown and "COALESCE" in shown
        # 1 and 3 through their stored vectors; 5 (not embedded yet) per row.
        assert [r[0] for r in c.execute(sql).fetchall()] == [1, 3, 5]


def test_rank_order_by_limit_on_embedded_text_column_uses_hnsw(docs: ServerProcess) -> None:
    with connect(docs) as c:
        sql = "SELECT id FROM docs ORDER BY semantic_rank(content, 'billing dispute') DESC LIMIT 2"
        shown = plan(c, sql)
        assert "HNSW_INDEX_SCAN" in shown and "content_embedding" in shown
        assert [r[0] for r in c.execute(sql).fetchall()] == [1, 3]
        scores = c.execute(
            "SELECT id, semantic_rank(content, 'billing dispute') AS s FROM docs ORDER BY id"
        ).fetchall()
        assert all(s is not None for _, s in scores)  # row 5 scored per row


def test_nested_semantic_call_and_text_expression(docs: ServerProcess) -> None:
    with connect(docs) as c:
        c.execute("CREATE TABLE questions (q TEXT)")
        c.execute("INSERT INTO questions VALUES ('billing dispute'), ('weather forecast')")
        rows = c.execute(
            "SELECT id FROM docs WHERE semantic_match(content, (SELECT q FROM questions "
            "ORDER BY semantic_rank(q, 'problem with my invoice') DESC LIMIT 1), 0.6) ORDER BY id"
        ).fetchall()
        assert rows == [(1,), (3,)]
        upper = c.execute(
            "SELECT id FROM docs ORDER BY semantic_rank(content, upper('weather') || ' in Paris') "
            "DESC LIMIT 1"
        ).fetchall()
        assert upper == [(2,)]


def test_argument_that_cannot_be_told_gets_a_clear_error(docs: ServerProcess) -> None:
    with connect(docs) as c, pytest.raises(psycopg.Error) as info:
        c.execute("SELECT semantic_rank(content_embedding, nullif(content, '')) FROM docs")
    assert info.value.sqlstate == "42804"
    assert "semantic_rank" in str(info.value) and "FLOAT[] vector" in str(info.value)
    assert "CAST(... AS TEXT)" in (info.value.diag.message_hint or "")
    with connect(docs) as c:  # as advised: a text cast is embedded
        rows = c.execute(
            "SELECT id FROM docs ORDER BY semantic_rank(content_embedding, "
            "CAST(nullif('sunny weather', '') AS TEXT)) DESC LIMIT 1"
        ).fetchall()
        assert rows == [(2,)]


def test_updating_embedded_text_clears_its_vector(docs: ServerProcess) -> None:
    with connect(docs) as c:
        c.execute("UPDATE docs SET content = 'Sunny skies over the beach' WHERE id = 3")
        assert c.execute("SELECT content_embedding FROM docs WHERE id = 3").fetchone() == (None,)
        rows = c.execute(
            "SELECT id FROM docs WHERE semantic_match(content, 'billing dispute', 0.45) ORDER BY id"
        ).fetchall()
        assert (3,) not in rows and (1,) in rows  # no stale vector of the old text
