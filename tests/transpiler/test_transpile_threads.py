"""Tokenizers, parsers and the generator are reused per thread (transpiler.dialects
._WORKERS): threads transpiling at once get the same results as one thread alone, and
each statement starts afresh."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from transpiler import cache_clear, transpile

SQL = [
    "SELECT id FROM docs WHERE semantic_match(embedding, 'billing issue', 0.75) LIMIT 10",
    "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^t$'",
    "SELECT NVL(a, 0), IFF(b > 1, 'x', 'y') FROM t; SELECT 1; EXPLAIN SELECT 2",
    "SELECT * FROM hatidata_rag_context('kb', 'embedding', [0.1, 0.2, 0.3], 3)",
    "SELECT id FROM items ORDER BY embedding <=> '[0.1,0.2,0.3]' LIMIT 5",
    "SELECT m.content FROM search_memory('billing', top_k := 5) m",
    "INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
]


def run(sql: str) -> tuple:
    cache_clear()  # each call takes the uncached path (the cache itself is thread-safe)
    return tuple((s.sql, s.markers, s.external_access, s.column_names) for s in transpile(sql))


def test_threads_agree_with_one_thread() -> None:
    expected = [run(sql) for sql in SQL]
    work = SQL * 30
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(run, work))
    assert got == expected * 30


def test_reused_generator_starts_each_statement_afresh() -> None:
    # sqlglot invents alias names (_t0, _t1, ...) per generator; markers are per statement.
    sql = "SELECT * FROM (VALUES (1, 2)) AS (a, b); SELECT * FROM (SELECT 1) AS (x)"
    for _ in range(2):
        cache_clear()
        first, second = transpile(sql)
        assert first.sql == "SELECT * FROM (VALUES (1, 2)) AS _t0(a, b)"
        assert second.sql == "SELECT * FROM (SELECT 1) AS _t0(x)"
    cache_clear()
    (marked,) = transpile("SELECT semantic_rank(embedding, 'a') FROM t", vector_dims=3)
    (other,) = transpile("SELECT semantic_rank(embedding, 'b') FROM t", vector_dims=3)
    assert [m.value for m in marked.markers] == ["a"]
    assert [m.value for m in other.markers] == ["b"]
    assert (
        marked.bind_sql(2)
        == "SELECT ARRAY_COSINE_SIMILARITY(embedding, CAST($2 AS FLOAT[3])) FROM t"
    )
    assert (
        other.bind_sql(1)
        == "SELECT ARRAY_COSINE_SIMILARITY(embedding, CAST($1 AS FLOAT[3])) FROM t"
    )
