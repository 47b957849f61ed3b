"""Latency of single agent calls over the wire, one connection, against a plain point
SELECT over the same wire in the same run (the floor an agent call can reach).

    PYTHONPATH=. .venv/bin/python bench/agent_calls.py [--n 300]

Prints p50 / p99 per kind and the ratio to the point SELECT's p50. Targets (issues 23,
24): store_memory without wait and append_event under 2 ms p50. `--root DIR` serves
another tree (say, an export of main) for a before/after in one run.

Where a store's time went (py-spy on the server, 2026-11-27): per store on the DuckDB
worker ~3 ms in DuckDB's COMMIT of the agent database file (in-process: 3.3 ms on a
file, 0.24 ms in memory; the WAL fsync itself is 0.08 ms), ~2 ms in the INSERT, ~0.6 ms
in the dedup SELECT, ~1 ms in the later vector write (its own transaction, under the same
write lock); the rest is waiting and thread hand-offs. So an acknowledgement that waits
for a DuckDB commit cannot reach 2 ms here.

With the agent journal (proxy/agent/journal.py; stages timed with perf_counter_ns on the
server, 2026-11-27, load 30-45 on 2 cores): the journaled store's ~11 ms were the
fdatasync on the main loop (2-7 ms on this disk under load, 0.1-0.2 ms when it is quiet),
the hop to the main loop and back behind the apply rounds and the embedding pump running
there, and GIL waits after every blocking call while one-row apply transactions (one per
store) ran beside it. Now the line is written on the connection's thread, fsynced by the
journal's flusher thread while the statement's DuckDB work runs (the reply waits for it),
and applied in batches: a store costs what whoami() costs plus whatever of the fsync the
DuckDB work does not hide.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hatiserver import start_hatiproxy  # noqa: E402

KINDS = {
    "point select": ("SELECT v FROM bench_point WHERE k = %s", lambda i: (i % 100,)),
    "whoami()": ("SELECT * FROM whoami()", lambda i: None),
    "store_memory": ("SELECT memory_id FROM store_memory(%s)", lambda i: (f"fact {i} {time.time_ns()}",)),
    "append_event": (
        "SELECT * FROM append_event(%s, 'user', %s)",
        lambda i: ("bench-session", f'{{"role":"user","parts":[{{"text":"turn {i}"}}]}}'),
    ),
}  # fmt: skip


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(p * len(s)))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--port", type=int, help="an already running server")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--root", type=Path, help="serve this tree (say, main) instead of this one")
    ap.add_argument("--server-arg", action="append", default=[], help="extra `serve` argument")
    args = ap.parse_args()
    proc = None
    with tempfile.TemporaryDirectory() as d:
        if args.port:
            port = args.port
        else:
            proc, port = start_hatiproxy(
                Path(d),
                *args.server_arg,
                database=str(Path(d) / "bench.duckdb"),
                **({"root": args.root} if args.root else {}),
            )
        try:
            with psycopg.connect(
                f"host=127.0.0.1 port={port} user=bench dbname=hatidata", autocommit=True
            ) as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS bench_point (k INT PRIMARY KEY, v TEXT)")
                conn.execute(
                    "INSERT INTO bench_point SELECT i, 'v' || i FROM range(100) t(i)"
                    " ON CONFLICT DO NOTHING"
                )
                with contextlib.suppress(psycopg.Error):  # kept from an earlier run (--port)
                    conn.execute("SELECT * FROM create_session('bench', 'u', 'bench-session')")
                base = None
                for kind in args.kinds.split(","):
                    sql, params = KINDS[kind]
                    for i in range(20):  # warm up
                        conn.execute(sql, params(i)).fetchall()
                    times = []
                    for i in range(args.n):
                        t0 = time.perf_counter()
                        conn.execute(sql, params(i + 1000)).fetchall()
                        times.append(time.perf_counter() - t0)
                    p50 = statistics.median(times) * 1e3
                    base = base or p50
                    print(
                        f"{kind:14s} p50 {p50:6.2f} ms  p99 {pct(times, 0.99) * 1e3:6.2f} ms"
                        f"  x{p50 / base:5.1f} of point select"
                    )
        finally:
            if proc is not None:
                proc.kill()
                proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
