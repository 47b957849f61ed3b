"""Per-query cost of transpiler.transpile against plain sqlglot, on the same SQL.

Sides (same process, same statements, all warmed up first):
- plain : `sqlglot.transpile(sql, read=R, write="duckdb")`: tokenize and parse with
          sqlglot's dialect R, generate with its DuckDB dialect. R is postgres, except
          snowflake for the Snowflake statements (transpile reads those with its
          Snowflake reader too; both give the same DuckDB SQL). None of hatiproxy's work:
          no semantic / pgvector / catalog rewrites, markers, column names or checks.
- bare  : the same parse + generate with the two Dialect objects looked up once (what
          sqlglot.transpile spends resolving dialect names by string is left out).
- cold  : `cache_clear(); transpile(sql)`: the whole uncached path (split, classify,
          triggers, parse, rewrites, generate, markers, column names, external access).
- cached: `transpile(sql)` on a warm cache.

Each round times every statement `--reps` times per side, interleaved call by call
(--batch: each side's calls back to back, which keeps caches warm for each side); a
category's ratio in a round is sum(cold) / sum(plain) over its statements, and the
figure printed is the median over rounds (spread: min-max over rounds). Times are CPU
seconds of this process (--wall for wall clock).

Run: python bench/transpile.py [--rounds N] [--reps N] [--queries] [--wall] [--batch]
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
from sqlglot.dialects.dialect import Dialect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transpiler import cache_clear, set_agent_functions, transpile  # noqa: E402

# The server tells the transpiler its agent functions; here, the one the corpus calls.
set_agent_functions({"search_memory"})

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


SIDES = ("plain", "bare", "cold")
# sqlglot's own reader per category (postgres unless listed).
PLAIN_READ = {"snowflake": "snowflake"}
_DIALECTS = {name: Dialect.get_or_raise(name) for name in ("postgres", "snowflake", "duckdb")}


def sides(category: str) -> dict[str, Callable[[str], object]]:
    read = PLAIN_READ.get(category, "postgres")
    reader, writer = _DIALECTS[read], _DIALECTS["duckdb"]

    def plain(sql: str) -> None:
        sqlglot.transpile(sql, read=read, write="duckdb")

    def bare(sql: str) -> None:
        for tree in reader.parse(sql):
            writer.generate(tree, copy=False)

    def cold(sql: str) -> None:
        cache_clear()
        transpile(sql)

    return {"plain": plain, "bare": bare, "cold": cold}


CLOCK = time.process_time  # CPU seconds of this process: other load on the box adds less noise


BATCH = False  # --batch: each side's reps back to back (warm caches) instead of interleaved


def timed(fns: dict[str, Callable[[str], object]], sql: str, reps: int, shift: int) -> dict:
    """Seconds per side for `reps` calls each, the sides interleaved call by call (in an
    order rotating with `shift`) so that load changes on the machine hit all of them."""
    took = dict.fromkeys(SIDES, 0.0)
    if BATCH:
        k = shift % len(SIDES)
        for side in SIDES[k:] + SIDES[:k]:
            fn = fns[side]
            start = CLOCK()
            for _ in range(reps):
                fn(sql)
            took[side] = CLOCK() - start
        return took
    for rep in range(reps):
        k = (shift + rep) % len(SIDES)
        for side in SIDES[k:] + SIDES[:k]:
            fn = fns[side]
            start = CLOCK()
            fn(sql)
            took[side] += CLOCK() - start
    return took


Ratios = dict[str, tuple[float, float]]  # category -> (cold/plain, cold/bare)


def run(rounds: int, reps: int) -> tuple[list[Ratios], list[dict[str, float]]]:
    """Per round: ratios per category; per statement: median us per side."""
    fns = [sides(category) for category, _ in CORPUS]
    per_query: list[dict[str, list[float]]] = [{s: [] for s in SIDES} for _ in CORPUS]
    rounds_out: list[Ratios] = []
    for r in range(rounds):
        sums: dict[str, dict[str, float]] = {}
        gc.collect()
        for i, (category, sql) in enumerate(CORPUS):
            took = timed(fns[i], sql, reps, r + i)
            for side in SIDES:
                per_query[i][side].append(took[side] / reps * 1e6)
                for key in (category, "overall"):
                    acc = sums.setdefault(key, dict.fromkeys(SIDES, 0.0))
                    acc[side] += took[side]
        rounds_out.append(
            {k: (v["cold"] / v["plain"], v["cold"] / v["bare"]) for k, v in sums.items()}
        )
    medians = [{s: statistics.median(q[s]) for s in SIDES} for q in per_query]
    return rounds_out, medians


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
    ap.add_argument(
        "--batch", action="store_true", help="time each side's reps back to back (warm caches)"
    )
    args = ap.parse_args()
    global CLOCK, BATCH
    if args.wall:
        CLOCK = time.perf_counter
    BATCH = args.batch
    for _ in range(3):  # warm imports, sqlglot's lazy tables and our own caches
        for category, sql in CORPUS:
            for fn in sides(category).values():
                fn(sql)
    ratios, medians = run(args.rounds, args.reps)
    categories = list(dict.fromkeys(c for c, _ in CORPUS)) + ["overall"]
    print(__doc__.split("\n\n")[1])
    clock = "wall clock" if args.wall else "CPU time"
    mode = "each side's reps back to back" if args.batch else "sides interleaved call by call"
    print(
        f"\n{len(CORPUS)} statements, {args.rounds} rounds x {args.reps} reps per side ({mode}), {clock}"
    )
    print(
        f"{'category':<11} {'n':>2} {'plain us':>8} {'bare us':>8} {'cold us':>8}"
        f" {'cold/plain':>10} {'(spread)':>11} {'cold/bare':>9}"
    )
    worst = 0.0
    for cat in categories:
        idx = [i for i, (c, _) in enumerate(CORPUS) if cat in (c, "overall")]
        us = {s: sum(medians[i][s] for i in idx) / len(idx) for s in SIDES}
        vs_plain = [r[cat][0] for r in ratios]
        vs_bare = statistics.median(r[cat][1] for r in ratios)
        ratio = statistics.median(vs_plain)
        worst = max(worst, ratio)
        print(
            f"{cat:<11} {len(idx):>2} {us['plain']:8.1f} {us['bare']:8.1f} {us['cold']:8.1f}"
            f" {ratio:10.2f} {min(vs_plain):5.2f}-{max(vs_plain):4.2f} {vs_bare:9.2f}"
        )
    if args.queries:
        print("\ncold/plain plain us  cold us  category   statement")
        for (cat, sql), m in zip(CORPUS, medians, strict=True):
            print(
                f"{m['cold'] / m['plain']:10.2f} {m['plain']:8.1f} {m['cold']:8.1f}  {cat:<10} {sql[:60]}"
            )
    print(f"\ntranspile, cached: {cached_us(args.reps * 100):.2f} us/query (target < 20 us)")
    overall = statistics.median(r["overall"][0] for r in ratios)
    print(
        f"target: cold/plain <= 1.30 overall and per category; overall {overall:.2f},"
        f" worst category {worst:.2f}"
    )


if __name__ == "__main__":
    main()
