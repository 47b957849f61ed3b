"""Cost of PostgreSQL division semantics (transpiler/division.py) on DuckDB, in process.

Sides, same run, interleaved per repetition, on one 1M-row table (int4 / int8 / numeric /
float8 columns, divisors never zero):
- before: the statement as sqlglot writes it without the rewrite (`a / b`: DuckDB's float
          division, what hatiproxy ran before);
- after : `transpile(sql)` (`__hati_div(a, b)`: a CASE over `a // b`);
- idiv  : `a // b` alone (DuckDB's integer division, no zero check): the floor.
Prints the median CPU time (process_time: one thread, in process) of each side per
statement and after/before.

Run: nice -n 5 python bench/division_ab.py [--rows N] [--reps N] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from proxy.db.catalog.install import install  # noqa: E402
from transpiler import transpile  # noqa: E402

QUERIES = (
    "SELECT sum(a / b) FROM t",
    "SELECT sum(c / b) FROM t",
    "SELECT sum(n / b) FROM t",
    "SELECT sum(f / b) FROM t",
    "SELECT sum(n / 7.0) FROM t",
    "SELECT sum(a % b) FROM t",
    "SELECT count(*) FROM t WHERE a / b > 100",
    "SELECT sum(a) / count(*) FROM t",
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    conn = duckdb.connect()
    install(conn)
    conn.execute(f"SET threads = {args.threads}")
    conn.execute(
        "CREATE TABLE t AS SELECT (i * 7)::INTEGER AS a, (i % 97 + 1)::INTEGER AS b, "
        "(i * 13)::BIGINT AS c, (i * 0.37)::DECIMAL(12, 2) AS n, (i * 1.5)::DOUBLE AS f "
        f"FROM range({args.rows}) r(i)"
    )
    for sql in QUERIES:
        after = transpile(sql)[0].sql
        before = sql
        idiv = sql.replace(" / ", " // ")
        sides = {"before": before, "after": after, "idiv": idiv}
        times: dict[str, list[float]] = {k: [] for k in sides}
        for q in sides.values():
            conn.execute(q).fetchall()  # warm
        for _ in range(args.reps):
            for name, q in sides.items():
                t0 = time.process_time()
                conn.execute(q).fetchall()
                times[name].append(time.process_time() - t0)
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        print(
            f"{sql:45s} before {med['before']:7.2f} ms  after {med['after']:7.2f} ms  "
            f"idiv {med['idiv']:7.2f} ms  after/before {med['after'] / med['before']:.2f}"
        )


if __name__ == "__main__":
    main()
