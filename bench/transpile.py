"""Per-query cost of transpiler.transpile against plain sqlglot, on the same SQL.

Sides (same process, same statements, both warmed up first):
- plain : `sqlglot.transpile(sql, read="postgres", write="duckdb")`, i.e. tokenize and
          parse with sqlglot's Postgres dialect, generate with its DuckDB dialect. It does
          none of hatiproxy's work (no semantic/pgvector/catalog rewrites, no markers).
- cold  : `cache_clear(); transpile(sql)`: the whole uncached path (split, classify,
          triggers, parse, rewrites, generate, markers, column names, external access).
- cached: `transpile(sql)` on a warm cache.

Each round times every statement `--reps` times per side, alternating which side goes
first; a category's ratio in a round is sum(cold) / sum(plain) over its statements, and
the figure printed is the median over rounds (spread: min-max over rounds).

Run: python bench/transpile.py [--rounds N] [--reps N] [--queries]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import sqlglot

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transpiler import cache_clear, transpile  # noqa: E402

# (category, SQL). "plain" statements need nothing beyond sqlglot's own translation.
CORPUS: list[tuple[str, str]] = [
    ("plain", "SELECT id, title FROM docs WHERE id = $1"),
    (
        "plain",
        "SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id "
        "WHERE o.created > now() - interval '7 days' GROUP BY c.region ORDER BY 1 DESC",
    ),
    (
        "plain",
        "INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
    ),
    ("plain", "UPDATE accounts SET balance = balance - $1 WHERE id = $2"),
    ("plain", "DELETE FROM sessions WHERE expires_at < current_timestamp"),
    (
        "plain",
        "WITH r AS (SELECT user_id, sum(amount) AS s FROM payments GROUP BY 1) "
        "SELECT u.name, r.s FROM users u JOIN r ON r.user_id = u.id WHERE r.s > 100",
    ),
    (
        "plain",
        "SELECT a, b, c, d, e FROM wide_table WHERE a BETWEEN 1 AND 10 AND b IN (1, 2, 3) "
        "AND c LIKE 'x%' ORDER BY d",
    ),
    ("pg-catalog", 'SELECT * FROM "hatidata"."public"."events" WHERE kind = \'click\' LIMIT 100'),
    (
        "pg-catalog",
        "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) "
        "'^(t)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid)",
    ),
    (
        "pg-catalog",
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = 'docs' ORDER BY ordinal_position",
    ),
    ("pg-catalog", "SELECT attname FROM pg_attribute WHERE attrelid = 'docs'::regclass"),
    (
        "semantic",
        "SELECT id FROM docs WHERE semantic_match(embedding, 'billing issue', 0.75) LIMIT 10",
    ),
    (
        "semantic",
        "SELECT id, semantic_rank(embedding, 'refund') AS s FROM docs ORDER BY s DESC LIMIT 5",
    ),
    (
        "semantic",
        # JOIN_VECTOR is only a keyword for JOIN (plain sqlglot cannot read it): same path.
        "SELECT t.id, d.id FROM tickets t JOIN docs d "
        "ON semantic_match(d.embedding, t.subject, 0.9) ORDER BY 1, 2",
    ),
    ("semantic", "SELECT * FROM hatidata_rag_context('kb', 'embedding', [0.1, 0.2, 0.3], 3)"),
    ("semantic", "SELECT id, title FROM hatidata_context('docs', 'refund', 2)"),
    ("pgvector", "SELECT id FROM items ORDER BY embedding <=> '[0.1,0.2,0.3]' LIMIT 5"),
    ("pgvector", "SELECT id FROM items WHERE embedding <-> '[1,2,3]'::vector < 0.5"),
    ("snowflake", "SELECT NVL(a, 0), IFF(b > 1, 'x', 'y'), DATEADD('day', 3, d) FROM t"),
    ("agent", "SELECT m.content FROM search_memory('billing', top_k := 5) m WHERE m.score > 0.2"),
]


def plain(sql: str) -> None:
    sqlglot.transpile(sql, read="postgres", write="duckdb")


def cold(sql: str) -> None:
    cache_clear()
    transpile(sql)


CLOCK = time.process_time  # CPU seconds of this process: other load on the box adds less noise


def timed(fn: Callable[[str], object], sql: str, reps: int) -> float:
    """Seconds for `reps` calls."""
    start = CLOCK()
    for _ in range(reps):
        fn(sql)
    return CLOCK() - start


def run(rounds: int, reps: int) -> tuple[list[dict[str, float]], list[list[float]]]:
    """Per round: {category: cold/plain}; per statement: [plain_us, cold_us] medians."""
    per_query: list[tuple[list[float], list[float]]] = [([], []) for _ in CORPUS]
    ratios: list[dict[str, float]] = []
    for r in range(rounds):
        sums: dict[str, list[float]] = {}
        gc.collect()
        for i, (category, sql) in enumerate(CORPUS):
            sides = ((plain, 0), (cold, 1)) if (r + i) % 2 == 0 else ((cold, 1), (plain, 0))
            got = [0.0, 0.0]
            for fn, side in sides:
                got[side] = timed(fn, sql, reps)
                per_query[i][side].append(got[side] / reps * 1e6)
            for key in (category, "overall"):
                acc = sums.setdefault(key, [0.0, 0.0])
                acc[0] += got[0]
                acc[1] += got[1]
        ratios.append({k: c / p for k, (p, c) in sums.items()})
    medians = [[statistics.median(p), statistics.median(c)] for p, c in per_query]
    return ratios, medians


def cached_us(reps: int) -> float:
    cache_clear()
    for _, sql in CORPUS:
        transpile(sql)
    start = time.perf_counter()
    for _ in range(reps):
        for _, sql in CORPUS:
            transpile(sql)
    return (time.perf_counter() - start) / (reps * len(CORPUS)) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--queries", action="store_true", help="also print each statement")
    ap.add_argument("--wall", action="store_true", help="wall clock instead of CPU time")
    args = ap.parse_args()
    global CLOCK
    if args.wall:
        CLOCK = time.perf_counter
    for _ in range(3):  # warm imports, sqlglot's lazy tables and our own caches
        for _, sql in CORPUS:
            plain(sql)
            cold(sql)
    ratios, medians = run(args.rounds, args.reps)
    categories = list(dict.fromkeys(c for c, _ in CORPUS)) + ["overall"]
    print(__doc__.split("\n\n")[1])
    print(f"\n{len(CORPUS)} statements, {args.rounds} rounds x {args.reps} reps per side")
    print(f"{'category':<12} {'n':>3} {'plain us':>9} {'cold us':>9} {'cold/plain':>10}  spread")
    for cat in categories:
        idx = [i for i, (c, _) in enumerate(CORPUS) if cat in (c, "overall")]
        p = sum(medians[i][0] for i in idx) / len(idx)
        c = sum(medians[i][1] for i in idx) / len(idx)
        rs = [r[cat] for r in ratios]
        print(
            f"{cat:<12} {len(idx):>3} {p:9.1f} {c:9.1f} {statistics.median(rs):10.2f}"
            f"  {min(rs):.2f}-{max(rs):.2f}"
        )
    if args.queries:
        print()
        for (cat, sql), (p, c) in zip(CORPUS, medians, strict=True):
            print(f"{c / p:5.2f} {p:7.1f} {c:7.1f}  {cat:<10} {sql[:60]}")
    print(f"\ntranspile, cached: {cached_us(args.reps * 100):.2f} us/query (target < 20 us)")
    overall = statistics.median(r["overall"] for r in ratios)
    print(f"target: cold/plain <= 1.30 overall and per category; overall {overall:.2f}")


if __name__ == "__main__":
    main()
