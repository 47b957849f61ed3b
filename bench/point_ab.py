"""Point-SELECT latency, this tree vs a baseline commit, servers alternated in one run.

    python bench/point_ab.py [--base REV] [--rounds 5] [--queries 2000]

Starts one hatiproxy from this tree and one from `--base` (checked out with `git worktree
add` into a temporary directory; default: the commit before results were read through
Arrow), loads the same 100k-row table into both, then alternates them round by round: one
psycopg connection, `--queries` point SELECTs by primary key each. Prints every round's
p50 and the median ratio (this tree / base), so a busy machine hits both sides alike; and
the time to fetch the whole table (a large result, best of 3) the same way.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hatiserver import this_tree_and_base  # noqa: E402
from wire import ROWS, load_table  # noqa: E402

BASE = "a81c0f8^"  # the tree before the Arrow result path
# Columns that all take the Arrow path (bench/wire.py's query has a text float8, which does not).
POINT_SQL = "SELECT id, a, b FROM bench_kv WHERE id = {}"
BULK_SQL = "SELECT id, a, b FROM bench_kv"


def p50_us(dsn: str, queries: int, seed: int) -> float:
    rng = random.Random(seed)
    sql = POINT_SQL.format("%s")
    lat = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.cursor()
        for i in range(queries + 200):  # the first 200 warm up (and prepare the statement)
            k = rng.randint(1, ROWS)
            t0 = time.perf_counter()
            cur.execute(sql, (k,))
            assert cur.fetchall()[0][0] == k
            if i >= 200:
                lat.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(lat)


def bulk_ms(dsn: str) -> float:
    """The whole table (a large result, which must stay on the Arrow path): best of 3."""
    best = float("inf")
    with psycopg.connect(dsn, autocommit=True) as conn:
        for _ in range(3):
            t0 = time.perf_counter()
            assert len(conn.execute(BULK_SQL).fetchall()) == ROWS
            best = min(best, (time.perf_counter() - t0) * 1e3)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--queries", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        with this_tree_and_base(tmp, args.base) as servers:
            dsns = {}
            for name, (_, port) in servers.items():
                dsns[name] = f"host=127.0.0.1 port={port} user=bench dbname=hatidata"
                load_table(dsns[name])
            p50s: dict[str, list[float]] = {name: [] for name in dsns}
            bulk: dict[str, list[float]] = {name: [] for name in dsns}
            names = list(dsns)
            for r in range(args.rounds):
                order = names if r % 2 == 0 else names[::-1]
                for name in order:
                    p50s[name].append(p50_us(dsns[name], args.queries, seed=r))
                    bulk[name].append(bulk_ms(dsns[name]))
                print(f"round {r + 1}: " + "   ".join(
                    f"{n} point p50 {p50s[n][-1]:7.1f} us, {ROWS} rows {bulk[n][-1]:6.1f} ms"
                    for n in names))  # fmt: skip
            for what, runs, unit in (("point SELECT p50", p50s, "us"), ("bulk", bulk, "ms")):
                ratios = [a / b for a, b in zip(*runs.values(), strict=True)]
                print(f"{what}, median of rounds: "
                      + "   ".join(f"{n} {statistics.median(v):.1f} {unit}" for n, v in runs.items())
                      + f"   ratio this/base {statistics.median(ratios):.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
