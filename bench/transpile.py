"""Per-query cost of transpiler.transpile, cold (cache cleared) and cached, against
plain `sqlglot.transpile(sql, read="postgres", write="duckdb")` on the same corpus.

Run: python bench/transpile.py [rounds]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import sqlglot

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transpiler import cache_clear, transpile  # noqa: E402

CORPUS = [
    "SELECT id, title FROM docs WHERE id = $1",
    "SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id "
    "WHERE o.created > now() - interval '7 days' GROUP BY c.region ORDER BY 1 DESC",
    "INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
    "UPDATE accounts SET balance = balance - $1 WHERE id = $2",
    "DELETE FROM sessions WHERE expires_at < current_timestamp",
    'SELECT * FROM "hatidata"."public"."events" WHERE kind = \'click\' LIMIT 100',
    "WITH r AS (SELECT user_id, sum(amount) AS s FROM payments GROUP BY 1) "
    "SELECT u.name, r.s FROM users u JOIN r ON r.user_id = u.id WHERE r.s > 100",
    "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) "
    "'^(t)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid)",
    "SELECT id FROM docs WHERE semantic_match(embedding, 'billing issue', 0.75) LIMIT 10",
    "SELECT id, semantic_rank(embedding, 'refund') AS s FROM docs ORDER BY s DESC LIMIT 5",
    "SELECT id FROM items ORDER BY embedding <=> '[0.1,0.2,0.3]' LIMIT 5",
    "SELECT NVL(a, 0), IFF(b > 1, 'x', 'y'), DATEADD('day', 3, d) FROM t",
    "SELECT * FROM hatidata_rag_context('kb', 'embedding', [0.1, 0.2, 0.3], 3)",
    "SELECT a, b, c, d, e FROM wide_table WHERE a BETWEEN 1 AND 10 AND b IN (1, 2, 3) "
    "AND c LIKE 'x%' ORDER BY d",
]


def per_query_us(fn, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        for sql in CORPUS:
            fn(sql)
    return (time.perf_counter() - start) / (rounds * len(CORPUS)) * 1e6


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    for sql in CORPUS:  # warm imports and sqlglot's own lazy tables
        sqlglot.transpile(sql, read="postgres", write="duckdb")
        transpile(sql)

    def plain(sql: str) -> None:
        sqlglot.transpile(sql, read="postgres", write="duckdb")

    def cold(sql: str) -> None:
        cache_clear()
        transpile(sql)

    plain_us = per_query_us(plain, rounds)
    cold_us = per_query_us(cold, rounds)
    cache_clear()
    for sql in CORPUS:
        transpile(sql)
    cached_us = per_query_us(transpile, rounds * 100)
    print(f"corpus: {len(CORPUS)} statements, {rounds} rounds")
    print(f"plain sqlglot.transpile : {plain_us:9.1f} us/query")
    print(f"transpile, cold         : {cold_us:9.1f} us/query  ({cold_us / plain_us:.2f}x plain)")
    print(f"transpile, cached       : {cached_us:9.2f} us/query  (target < 20 us)")
    print(f"ratio cold/plain        : {cold_us / plain_us:.2f} (target <= 1.30)")


if __name__ == "__main__":
    main()
