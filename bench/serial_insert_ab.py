"""INSERT into a serial table, this tree vs a baseline commit, servers alternated in one run.

    python bench/serial_insert_ab.py [--base REV] [--rounds 5] [--inserts 1500]

What sequence_values.py (this session's currval / lastval) costs writers: each round, on
each server, one psycopg connection (autocommit, prepared statements) times `--inserts`
single-row `INSERT ... VALUES` (ids from the serial default, read back from a RETURNING
the server adds), the same with the client's `RETURNING id` (Django, Rails), and
`INSERT ... SELECT` of one row (the path that reads the sequence before and after), then
two connections inserting at once (rows per second together). Each measure is also taken
as the server process's CPU time per insert (/proc/PID/stat, all its threads): on a busy
machine wall time swings far more than the work done. Prints each round and the median
ratio this tree / base of every measure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hatiserver import this_tree_and_base  # noqa: E402

BASE = "034f61d"  # main before per-session currval
SHAPES = {
    "VALUES": "INSERT INTO bench_serial (v, w) VALUES (%s, 'x')",
    "RETURNING id": "INSERT INTO bench_serial (v, w) VALUES (%s, 'x') RETURNING id",
    "SELECT": "INSERT INTO bench_serial (v, w) SELECT %s, 'x'",
}


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def per_insert_us(dsn: str, pid: int, sql: str, n: int) -> tuple[float, float]:
    """(wall, server CPU) microseconds per insert."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.cursor()
        for i in range(100):  # warm up, prepare
            cur.execute(sql, (i,), prepare=True)
        c0, t0 = cpu_s(pid), time.perf_counter()
        for i in range(n):
            cur.execute(sql, (i,), prepare=True)
        wall, cpu = time.perf_counter() - t0, cpu_s(pid) - c0
        return wall / n * 1e6, cpu / n * 1e6


def two_writers_per_s(dsn: str, n: int) -> float:
    def write() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            for i in range(n):
                conn.execute(SHAPES["VALUES"], (i,), prepare=True)

    threads = [threading.Thread(target=write) for _ in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return 2 * n / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--inserts", type=int, default=1500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        with this_tree_and_base(tmp, args.base) as servers:
            dsns, pids = {}, {}
            for name, (proc, port) in servers.items():
                pids[name] = proc.pid
                dsns[name] = f"host=127.0.0.1 port={port} user=bench dbname=hatidata"
                with psycopg.connect(dsns[name], autocommit=True) as c:
                    c.execute("CREATE TABLE bench_serial (id serial PRIMARY KEY, v int, w text)")
            measures = [*SHAPES, *(f"{s} CPU" for s in SHAPES), "2 writers rows/s"]
            runs: dict[str, dict[str, list[float]]] = {m: {n: [] for n in dsns} for m in measures}
            names = list(dsns)
            for r in range(args.rounds):
                order = names if r % 2 == 0 else names[::-1]
                for name in order:
                    for shape, sql in SHAPES.items():
                        wall, cpu = per_insert_us(dsns[name], pids[name], sql, args.inserts)
                        runs[shape][name].append(wall)
                        runs[f"{shape} CPU"][name].append(cpu)
                    runs["2 writers rows/s"][name].append(
                        two_writers_per_s(dsns[name], args.inserts)
                    )
                print(f"round {r + 1}: " + "; ".join(
                    f"{m} " + " / ".join(f"{v[n][-1]:.0f}" for n in names)
                    for m, v in runs.items()))  # fmt: skip
            for what, by_name in runs.items():
                ratios = [a / b for a, b in zip(*by_name.values(), strict=True)]
                unit = "rows/s" if "rows/s" in what else "us per insert"
                print(f"{what}: " + "   ".join(
                    f"{n} {statistics.median(v):.0f}" for n, v in by_name.items())
                    + f" {unit}   ratio this/base {statistics.median(ratios):.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
