"""Tokenizers and parsers are reused per thread (transpiler.dialects._WORKERS): threads
transpiling at once get the same results as one thread alone."""

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
