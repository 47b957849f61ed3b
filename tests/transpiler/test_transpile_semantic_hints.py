"""Catalog hints for semantic SQL: vector columns of any name, text columns with a
registered embedding column, and the rule that without a known table nothing changes."""

from __future__ import annotations

import duckdb
import duckdb_extensions
import pyarrow as pa
import pytest

from transpiler import ColumnHints, Statement, transpile

HINTS = ColumnHints(
    {
        "docs": {"id": "other", "content": "text", "content_embedding": "vector"},
        "items": {"id": "other", "features": "vector", "vec_notes": "text", "code": "other"},
        "tickets": {"id": "other", "subject": "text"},
    },
    {"docs": {"content": "content_embedding"}},
)


def one(sql: str, hints: ColumnHints | None = HINTS, **kw) -> Statement:
    (stmt,) = transpile(sql, hints=hints, **kw)
    return stmt


def test_vector_column_of_any_name_is_a_vector_and_hnsw_shaped() -> None:
    sql = "SELECT id FROM items ORDER BY semantic_rank(features, 'q') DESC LIMIT 3"
    assert one(sql).sql == (
        "SELECT id FROM items ORDER BY ARRAY_COSINE_DISTANCE(features, __HATI_EMBED__('q')) LIMIT 3"
    )
    # Without hints: embedded per row, as the name rule says.
    assert "__HATI_EMBED__(features)" in one(sql, None).sql


def test_text_column_with_a_vector_like_name_is_embedded() -> None:
    sql = "SELECT id FROM items WHERE semantic_match(vec_notes, 'q')"
    assert "ARRAY_COSINE_SIMILARITY(__HATI_EMBED__(vec_notes)," in one(sql).sql
    assert "ARRAY_COSINE_SIMILARITY(vec_notes," in one(sql, None).sql


def test_match_on_embedded_text_column_reads_its_vectors_and_falls_back_per_row() -> None:
    stmt = one("SELECT id FROM docs WHERE semantic_match(content, 'billing', 0.5)")
    assert stmt.sql == (
        "SELECT id FROM docs WHERE COALESCE("
        "ARRAY_COSINE_SIMILARITY(content_embedding, __HATI_EMBED__('billing')), "
        "ARRAY_COSINE_SIMILARITY(__HATI_EMBED__(content), __HATI_EMBED__('billing'))) >= 0.5"
    )
    assert [m.kind for m in stmt.markers] == ["text", "column", "text"]
    assert stmt.bind_texts == ("billing",)


def test_rank_order_by_limit_uses_the_embedding_column_alone() -> None:
    stmt = one("SELECT id FROM docs ORDER BY semantic_rank(content, 'q') DESC LIMIT 3")
    assert stmt.sql == (
        "SELECT id FROM docs ORDER BY "
        "ARRAY_COSINE_DISTANCE(content_embedding, __HATI_EMBED__('q')) LIMIT 3"
    )
    # No LIMIT, no index: every row keeps its place (per-row embedding where missing).
    unlimited = one("SELECT id FROM docs ORDER BY semantic_rank(content, 'q') DESC").sql
    assert "COALESCE(ARRAY_COSINE_DISTANCE(content_embedding" in unlimited


def test_rank_through_alias_and_table_alias() -> None:
    stmt = one("SELECT id, semantic_rank(d.content, 'q') AS s FROM docs d ORDER BY s DESC LIMIT 2")
    assert stmt.sql == (
        "SELECT id, COALESCE(ARRAY_COSINE_SIMILARITY(d.content_embedding, __HATI_EMBED__('q')), "
        "ARRAY_COSINE_SIMILARITY(__HATI_EMBED__(d.content), __HATI_EMBED__('q'))) AS s "
        "FROM docs AS d ORDER BY ARRAY_COSINE_DISTANCE(d.content_embedding, __HATI_EMBED__('q')) "
        "LIMIT 2"
    )


def test_join_vector_resolves_each_side() -> None:
    stmt = one(
        "SELECT t.id FROM tickets t JOIN_VECTOR items i ON semantic_match(i.features, t.subject)"
    )
    assert (
        "ARRAY_COSINE_SIMILARITY(i.features, __HATI_EMBED__(t.subject)) >= __HATI_DEFAULT_THRESHOLD__()"
        in stmt.sql
    )
    # Unqualified, in exactly one of the joined tables: resolved too.
    stmt = one("SELECT 1 FROM tickets t JOIN items i ON semantic_match(features, subject)")
    assert "ARRAY_COSINE_SIMILARITY(features, __HATI_EMBED__(subject))" in stmt.sql


def test_two_embedded_sides_try_each_pair() -> None:
    hints = ColumnHints(
        {"a": {"x": "text", "x_embedding": "vector"}, "b": {"y": "text", "y_embedding": "vector"}},
        {"a": {"x": "x_embedding"}, "b": {"y": "y_embedding"}},
    )
    stmt = one("SELECT 1 FROM a JOIN b ON semantic_match(a.x, b.y)", hints)
    assert stmt.sql.count("ARRAY_COSINE_SIMILARITY(") == 4
    assert stmt.sql.startswith(
        "SELECT 1 FROM a JOIN b ON COALESCE(ARRAY_COSINE_SIMILARITY(a.x_embedding, b.y_embedding)"
    )


@pytest.mark.parametrize(
    "sql",
    [
        # unknown table, CTE shadowing a table, derived table, ambiguous join, temp-like
        "SELECT id FROM other WHERE semantic_match(features, 'q')",
        "WITH items AS (SELECT 1 AS features) SELECT 1 FROM items WHERE semantic_match(features, 'q')",
        "SELECT 1 FROM (SELECT * FROM items) s WHERE semantic_match(features, 'q')",
        "SELECT 1 FROM items JOIN other ON true WHERE semantic_match(features, 'q')",
        "SELECT 1 FROM items i WHERE semantic_match(x.features, 'q')",
        "SELECT 1 FROM read_parquet('f') WHERE semantic_match(features, 'q')",
    ],
)
def test_unresolved_table_behaves_as_without_hints(sql: str) -> None:
    assert one(sql).sql == one(sql, None).sql
    assert "__HATI_EMBED__(features)" in one(sql).sql or "x.features" in one(sql).sql


def test_outer_reference_and_dml_scopes() -> None:
    stmt = one(
        "SELECT id FROM items WHERE EXISTS (SELECT 1 FROM tickets "
        "WHERE semantic_match(features, subject))"
    )
    assert "ARRAY_COSINE_SIMILARITY(features, __HATI_EMBED__(subject))" in stmt.sql
    delete = one("DELETE FROM docs WHERE semantic_match(content, 'spam', 0.9)").sql
    assert "COALESCE(ARRAY_COSINE_SIMILARITY(content_embedding" in delete
    update = one("UPDATE items SET code = 1 WHERE semantic_match(features, 'x')").sql
    assert "ARRAY_COSINE_SIMILARITY(features, __HATI_EMBED__('x'))" in update


def test_subquery_selecting_a_hinted_column() -> None:
    stmt = one("SELECT semantic_rank(embedding, (SELECT features FROM items LIMIT 1)) FROM t")
    assert "(embedding, (SELECT features FROM items LIMIT 1))" in stmt.sql
    stmt = one("SELECT semantic_rank(embedding, (SELECT vec_notes FROM items LIMIT 1)) FROM t")
    assert "__HATI_EMBED__((SELECT vec_notes FROM items LIMIT 1))" in stmt.sql


def test_hints_are_part_of_the_cache_key_and_compared_by_content() -> None:
    same = ColumnHints(
        {
            "docs": {"id": "other", "content": "text", "content_embedding": "vector"},
            "items": {"id": "other", "features": "vector", "vec_notes": "text", "code": "other"},
            "tickets": {"id": "other", "subject": "text"},
        },
        {"docs": {"content": "content_embedding"}},
    )
    assert same == HINTS and hash(same) == hash(HINTS) and same is not HINTS
    sql = "SELECT id FROM items ORDER BY semantic_rank(features, 'cache') DESC LIMIT 1"
    assert transpile(sql, hints=same) is transpile(sql, hints=HINTS)
    assert transpile(sql, hints=ColumnHints({})) != transpile(sql, hints=HINTS)
    assert transpile(sql) == transpile(sql, hints=ColumnHints({}))


def _counting_udf(calls: list[str]):
    def embed(values):  # the server's UDF shape: arrow in, FLOAT[2] out
        texts = values.to_pylist()
        calls.extend(texts)
        vecs = [[1.0, 0.0] if "bill" in t else [0.0, 1.0] for t in texts]
        return pa.array(vecs, type=pa.list_(pa.float32(), 2))

    return embed


def test_duckdb_embeds_only_rows_without_a_vector_and_uses_hnsw() -> None:
    duckdb_extensions.import_extension("vss")
    con = duckdb.connect()
    con.execute("LOAD vss")
    calls: list[str] = []
    con.create_function(
        "__HATI_EMBED__",
        _counting_udf(calls),
        ["VARCHAR"],
        "FLOAT[2]",
        type="arrow",
        side_effects=False,
    )
    con.execute("CREATE TABLE docs (id INT, content VARCHAR, content_embedding FLOAT[2])")
    con.execute("INSERT INTO docs SELECT i, 'bill ' || i, [1, 0]::FLOAT[2] FROM range(100) t(i)")
    con.execute("CREATE INDEX h ON docs USING HNSW (content_embedding) WITH (metric = 'cosine')")
    con.execute("INSERT INTO docs VALUES (500, 'bill new', NULL), (501, 'ship new', NULL)")
    stmt = one("SELECT id FROM docs WHERE semantic_match(content, 'billing', 0.9)", vector_dims=2)
    rows = con.execute(stmt.bind_sql(1), [[1.0, 0.0]]).fetchall()
    assert len(rows) == 101 and (500,) in rows and (501,) not in rows
    assert sorted(calls) == ["bill new", "ship new"]  # not the 100 embedded rows
    top = one(
        "SELECT id FROM docs ORDER BY semantic_rank(content, 'q') DESC LIMIT 3", vector_dims=2
    )
    plan = con.execute("EXPLAIN " + top.bind_sql(1), [[1.0, 0.0]]).fetchall()
    assert "HNSW_INDEX_SCAN" in "".join(str(row) for row in plan)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "UPDATE docs SET content = $1 WHERE id = $2",
            "UPDATE docs SET content = $1, content_embedding = NULL WHERE id = $2",
        ),
        (
            "INSERT INTO docs (id, content) VALUES (1, 'x') "
            "ON CONFLICT (id) DO UPDATE SET content = excluded.content",
            "INSERT INTO docs (id, content) VALUES (1, 'x') "
            "ON CONFLICT(id) DO UPDATE SET content = excluded.content, content_embedding = NULL",
        ),
        # the vector set explicitly, another column, another table: as written
        (
            "UPDATE docs SET content = 'a', content_embedding = NULL",
            "UPDATE docs SET content = 'a', content_embedding = NULL",
        ),
        ("UPDATE docs SET id = 2", "UPDATE docs SET id = 2"),
        ("UPDATE items SET vec_notes = 'a'", "UPDATE items SET vec_notes = 'a'"),
    ],
)
def test_writing_an_embedded_text_column_clears_its_vector(sql: str, expected: str) -> None:
    assert one(sql).sql == expected
    assert one(sql, None).sql == one(sql, ColumnHints({})).sql
