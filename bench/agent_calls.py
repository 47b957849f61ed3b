"""Latency of single agent calls over the wire, one connection, against a plain point
SELECT over the same wire in the same run (the floor an agent call can reach).

    PYTHONPATH=. .venv/bin/python bench/agent_calls.py [--n 300]

Prints p50 / p99 per kind and the ratio to the point SELECT's p50 (the kinds run in
turn, one call each, so all meet the same load), and the disk's write + fdatasync p50.
`--base DIR` serves a second tree (say, an export of main) in the same turns: before
and after from one run; `--root DIR` serves another tree instead of this one. Targets
(issues 23, 24): store_memory without wait and append_event under 2 ms p50.

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

Stages of one call on the server (perf_counter_ns laps on the connection's thread,
2026-11-27, load 33-48 on 2 cores, p50 of each stage; a point SELECT beside them):
message decode and Parse/Bind ~0.3 ms (point 0.2), planning up to the call ~0.1 ms, the
call's fast path (validation, hash, journal record write) 0.2-0.3 ms, its rows to Arrow
0.25-0.4 ms, the DuckDB statement 3.1 ms for a store and 2.4 ms for an event (point 0.7:
the call's rows were a temp view made by a DDL statement first, and DuckDB's next query
after a DDL costs several times more), fsync left after the DuckDB work 0.4-0.5 ms with
the append-only log, reply ~0.05 ms. Now the rows go into the statement as a CTE over
parameters (execution/inline_rows.with_rows: DuckDB part 1.1-1.7 / 0.9-1.1 ms, rows 0.02
ms) and the journal's preallocated segments are overwritten in place (fsync left
0.08-0.18 ms p50). Under that load every figure over the wire is 5-10x the quiet machine's.

Now a statement that is exactly one agent call (`SELECT memory_id FROM store_memory($1)`,
`SELECT * FROM append_event(...)`) runs no DuckDB statement at all: its result is the
call's own rows (proxy/pgserver/call_shortcut.py), so the stage left beside decode,
Parse/Bind and the call is the journal's fsync (py-spy on the server, load ~25: ~80 % of
a store's time on its connection thread was the wait for the flusher thread's
fdatasync, 2-3 ms p50 on this disk under load). Wrap the call (`... WHERE true`) to time
the DuckDB path.
"""

from __future__ import annotations

import argparse
import contextlib
import os
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


def setup(conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS bench_point (k INT PRIMARY KEY, v TEXT)")
    conn.execute(
        "INSERT INTO bench_point SELECT i, 'v' || i FROM range(100) t(i) ON CONFLICT DO NOTHING"
    )
    with contextlib.suppress(psycopg.Error):  # kept from an earlier run (--port)
        conn.execute("SELECT * FROM create_session('bench', 'u', 'bench-session')")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--port", type=int, help="an already running server")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--root", type=Path, help="serve this tree (say, main) instead of this one")
    ap.add_argument(
        "--base", type=Path, help="also serve this tree (say, an export of main), same turns"
    )
    ap.add_argument("--server-arg", action="append", default=[], help="extra `serve` argument")
    args = ap.parse_args()
    procs = []
    kinds = args.kinds.split(",")
    with tempfile.TemporaryDirectory() as d, contextlib.ExitStack() as stack:
        ports = {}
        if args.port:
            ports["server"] = args.port
        trees = {} if args.port else {"this": args.root}
        if args.base:
            trees["base"] = args.base
        for name, root in trees.items():
            proc, ports[name] = start_hatiproxy(
                Path(d) / name,
                *args.server_arg,
                database=str(Path(d) / f"{name}.duckdb"),
                **({"root": root} if root else {}),
            )
            procs.append(proc)
        try:
            conns = {}
            for name, port in ports.items():
                conns[name] = stack.enter_context(
                    psycopg.connect(
                        f"host=127.0.0.1 port={port} user=bench dbname=hatidata", autocommit=True
                    )
                )
                setup(conns[name])
                for kind in kinds:
                    sql, params = KINDS[kind]
                    for i in range(20):  # warm up
                        conns[name].execute(sql, params(i)).fetchall()
            # Round robin, one call of each kind (and server) in turn: on a shared machine
            # whose load swings within seconds, every kind meets the same load. The disk's
            # cost of one durable append (write + fdatasync), the floor of an
            # acknowledgement that waits for one, is measured in the same turns.
            times: dict[tuple[str, str], list[float]] = {}
            fd = os.open(Path(d) / "fsync.probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try:
                for i in range(args.n):
                    for name, conn in conns.items():
                        for kind in kinds:
                            sql, params = KINDS[kind]
                            t0 = time.perf_counter()
                            conn.execute(sql, params(i + 1000)).fetchall()
                            times.setdefault((name, kind), []).append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    os.write(fd, b"x" * 200 + b"\n")
                    os.fdatasync(fd)
                    times.setdefault(("disk", "fdatasync"), []).append(time.perf_counter() - t0)
            finally:
                os.close(fd)
            base: dict[str, float] = {}
            for (name, kind), ts in times.items():
                p50 = statistics.median(ts) * 1e3
                ref = base.setdefault(name, p50) if name != "disk" else next(iter(base.values()))
                label = f"{name}: {kind}" if len(conns) > 1 or name == "disk" else kind
                print(
                    f"{label:22s} p50 {p50:6.2f} ms  p99 {pct(ts, 0.99) * 1e3:7.2f} ms"
                    f"  x{p50 / ref:5.1f} of {kinds[0]}"
                )
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
