"""Wire-protocol benchmark: hatiproxy vs in-process DuckDB vs PostgreSQL 15, same run.

    python bench/wire.py [--seconds 2] [--bulk-rows 1000000]

Point SELECTs by primary key on a 100k-row table:
  (a) in-process DuckDB from Python (prepared, parameterised),
  (b) hatiproxy over loopback with psycopg 3 (threads) and asyncpg (tasks), 1 and 8 conns,
  (c) a throwaway PostgreSQL 15 cluster with the same table and clients.
Prints queries/s, p50/p99 latency, and the ratios hatiproxy/in-process (p50, 1 conn),
PostgreSQL/hatiproxy throughput and 8-conn/1-conn scaling. Then a bulk result: 1M rows x
5 columns streamed to psycopg 3 vs an in-process DuckDB fetch, with the server's RSS
sampled while it streams (it must not hold the whole result in memory). Last, the
floors this machine sets for any wire server over in-process DuckDB (bench/wire_floors.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import duckdb
import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "differential"))
sys.path.insert(0, str(ROOT / "bench"))
from hatiserver import start_hatiproxy  # noqa: E402, F401 - also for point_ab, pgbench, transfer
from pgcluster import PgCluster, start_pg  # noqa: E402
from wire_floors import inprocess_qps, loopback_rtt_us  # noqa: E402

ROWS = 100_000
POINT_SQL = "SELECT id, a, b, c FROM bench_kv WHERE id = {}"
CREATE = "CREATE TABLE bench_kv (id integer PRIMARY KEY, a integer, b text, c double precision)"
FILL = (
    "INSERT INTO bench_kv SELECT g, g * 7 % 1000, 'row-' || g, g * 0.5 "
    f"FROM generate_series(1, {ROWS}) AS s(g)"
)
BULK_SQL = (
    "SELECT g AS id, g * 3 AS a, 'name-' || g AS b, g * 0.25 AS c, g % 2 = 0 AS d "
    "FROM generate_series(1, {n}) AS s(g)"
)


@dataclass
class Result:
    label: str
    queries: int
    seconds: float
    latencies_us: list[float]

    @property
    def qps(self) -> float:
        return self.queries / self.seconds

    def pct(self, p: float) -> float:
        lat = sorted(self.latencies_us)
        return lat[min(len(lat) - 1, int(p * len(lat)))]

    def line(self) -> str:
        return (
            f"  {self.label:<34} {self.qps:>9.0f} q/s   p50 {self.pct(0.5):>7.1f} us"
            f"   p99 {self.pct(0.99):>7.1f} us"
        )


# --- servers -------------------------------------------------------------------------------


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def load_table(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_kv")
        conn.execute(CREATE)
        conn.execute(FILL)
        assert conn.execute("SELECT count(*) FROM bench_kv").fetchone() == (ROWS,)


# --- point-select runners -------------------------------------------------------------------


def _loop(fn: Callable[[int], object], seconds: float, out: list[float]) -> int:
    rng = random.Random()
    n, end = 0, time.perf_counter() + seconds
    while True:
        key = rng.randint(1, ROWS)
        t0 = time.perf_counter()
        fn(key)
        t1 = time.perf_counter()
        out.append((t1 - t0) * 1e6)
        n += 1
        if t1 >= end:
            return n


def bench_inprocess(seconds: float) -> Result:
    con = duckdb.connect()
    con.execute(CREATE)
    con.execute(FILL)
    sql = POINT_SQL.format("$1")
    lat: list[float] = []

    def one(k: int) -> object:
        return con.execute(sql, [k]).fetchall()

    _loop(one, 0.3, [])  # warm-up
    t0 = time.perf_counter()
    n = _loop(one, seconds, lat)
    return Result("in-process DuckDB", n, time.perf_counter() - t0, lat)


def bench_psycopg(label: str, dsn: str, conns: int, seconds: float) -> Result:
    sql = POINT_SQL.format("%s")
    lats: list[list[float]] = [[] for _ in range(conns)]
    counts = [0] * conns
    connections = [psycopg.connect(dsn, autocommit=True) for _ in range(conns)]
    barrier = threading.Barrier(conns + 1)

    def worker(i: int) -> None:
        cur = connections[i].cursor()

        def one(k: int) -> object:
            cur.execute(sql, (k,))  # psycopg prepares it server-side after 5 runs
            return cur.fetchall()

        _loop(one, 0.3, [])
        barrier.wait()
        counts[i] = _loop(one, seconds, lats[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(conns)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    for c in connections:
        c.close()
    return Result(label, sum(counts), elapsed, [x for lat in lats for x in lat])


async def _asyncpg_run(dsn_kw: dict, conns: int, seconds: float) -> tuple[int, float, list[float]]:
    sql = POINT_SQL.format("$1")
    connections = [await asyncpg.connect(**dsn_kw) for _ in range(conns)]
    lat: list[float] = []

    async def worker(conn: asyncpg.Connection, measure: bool, dur: float) -> int:
        rng = random.Random()
        n, end = 0, time.perf_counter() + dur
        while True:
            t0 = time.perf_counter()
            await conn.fetchrow(sql, rng.randint(1, ROWS))
            t1 = time.perf_counter()
            if measure:
                lat.append((t1 - t0) * 1e6)
            n += 1
            if t1 >= end:
                return n

    await asyncio.gather(*(worker(c, False, 0.3) for c in connections))
    t0 = time.perf_counter()
    counts = await asyncio.gather(*(worker(c, True, seconds) for c in connections))
    elapsed = time.perf_counter() - t0
    for c in connections:
        await c.close()
    return sum(counts), elapsed, lat


def bench_asyncpg(label: str, port: int, user: str, db: str, conns: int, seconds: float) -> Result:
    kw = {"host": "127.0.0.1", "port": port, "user": user, "database": db}
    n, elapsed, lat = asyncio.run(_asyncpg_run(kw, conns, seconds))
    return Result(label, n, elapsed, lat)


# --- bulk result ------------------------------------------------------------------------------


def bench_bulk(dsn: str, pid: int, n: int) -> None:
    sql = BULK_SQL.format(n=n)
    con = duckdb.connect()
    t0 = time.perf_counter()
    cur = con.execute(sql)
    rows = 0
    while batch := cur.fetchmany(10_000):
        rows += len(batch)
    local = rows / (time.perf_counter() - t0)

    base = rss_kb(pid)
    peak = base
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, rss_kb(pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    received = 0
    raw_bytes = 0
    with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as pcur:
        t0 = time.perf_counter()
        for row in pcur.stream(sql, size=10_000):  # chunked rows: the client holds one chunk
            received += 1
            if received <= 1000:
                raw_bytes += sum(len(str(v)) for v in row)
        elapsed = time.perf_counter() - t0
    stop.set()
    sampler.join()
    after = rss_kb(pid)
    assert received == n, received
    est_mb = raw_bytes / 1000 * n / 1e6
    print(f"\nBulk: {n:,} rows x 5 columns")
    print(f"  in-process DuckDB fetchmany      {local:>12,.0f} rows/s")
    print(f"  hatiproxy -> psycopg 3 stream    {n / elapsed:>12,.0f} rows/s")
    print(f"  ratio hatiproxy/in-process       {n / elapsed / local:>12.2f}x")
    print(
        f"  server RSS before {base / 1024:.0f} MB, peak {peak / 1024:.0f} MB "
        f"(+{(peak - base) / 1024:.0f} MB), after {after / 1024:.0f} MB; "
        f"result as text ~{est_mb:.0f} MB"
    )


def print_floors(secs: float, res: dict[str, Result]) -> None:
    """The targets beside what this machine allows any server over in-process DuckDB."""
    inproc = res["inproc"].pct(0.5)
    rtt = loopback_rtt_us(secs)
    print("\nFloors on this machine (same run)")
    print(f"  loopback TCP round trip, two processes, p50    {rtt:7.1f} us")
    for drv in ("psycopg", "asyncpg"):
        pg1 = res[f"PostgreSQL 15/{drv}/1"].pct(0.5)
        print(
            f"  {drv}: (in-process + PostgreSQL's whole round trip) / in-process "
            f"{(inproc + pg1) / inproc:5.2f}x  (target 1.5x)"
        )
    con = duckdb.connect()
    con.execute(CREATE)
    con.execute(FILL)
    sql = POINT_SQL.format("$1")
    for work in (0, 50):
        one = inprocess_qps(con, sql, ROWS, 1, secs, python_us=work)
        eight = inprocess_qps(con, sql, ROWS, 8, secs, python_us=work)
        print(
            f"  in-process DuckDB, {work:>2} us of Python per query: 8 threads / 1 thread "
            f"{eight / one:5.2f}x  (target 1.6x)"
        )


# --- main ---------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0, help="measured time per run")
    ap.add_argument("--bulk-rows", type=int, default=1_000_000)
    args = ap.parse_args()
    secs = args.seconds
    started = time.perf_counter()

    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="hati-bench-"))
    proc, port = start_hatiproxy(tmp)
    pg: PgCluster | None = None
    try:
        pg = start_pg()
        hati_dsn = f"host=127.0.0.1 port={port} user=bench dbname=hatidata"
        load_table(hati_dsn)
        load_table(pg.dsn)
        print(
            f"Point SELECT by primary key, {ROWS:,} rows, {secs:.0f} s per run, {os.cpu_count()} CPUs"
        )
        res: dict[str, Result] = {}
        res["inproc"] = bench_inprocess(secs)
        for name, dsn, p, user, db in (
            ("hatiproxy", hati_dsn, port, "bench", "hatidata"),
            ("PostgreSQL 15", pg.dsn, pg.port, "postgres", "postgres"),
        ):
            for conns in (1, 8):
                res[f"{name}/psycopg/{conns}"] = bench_psycopg(
                    f"{name} psycopg x{conns}", dsn, conns, secs
                )
                res[f"{name}/asyncpg/{conns}"] = bench_asyncpg(
                    f"{name} asyncpg x{conns}", p, user, db, conns, secs
                )
        for r in res.values():
            print(r.line())
        inproc = res["inproc"].pct(0.5)
        print("\nRatios")
        for drv in ("psycopg", "asyncpg"):
            h1, h8 = res[f"hatiproxy/{drv}/1"], res[f"hatiproxy/{drv}/8"]
            p1, p8 = res[f"PostgreSQL 15/{drv}/1"], res[f"PostgreSQL 15/{drv}/8"]
            print(f"  {drv}: hatiproxy p50 / in-process p50 (1 conn)  {h1.pct(0.5) / inproc:6.2f}x")
            print(f"  {drv}: PostgreSQL / hatiproxy q/s, 1 conn      {p1.qps / h1.qps:6.2f}x")
            print(f"  {drv}: PostgreSQL / hatiproxy q/s, 8 conns     {p8.qps / h8.qps:6.2f}x")
            print(f"  {drv}: hatiproxy 8-conn / 1-conn q/s           {h8.qps / h1.qps:6.2f}x")
            print(f"  {drv}: PostgreSQL 8-conn / 1-conn q/s          {p8.qps / p1.qps:6.2f}x")
        print_floors(secs, res)
        bench_bulk(hati_dsn, proc.pid, args.bulk_rows)
    finally:
        proc.terminate()
        proc.wait(10)
        if pg is not None:
            pg.stop()
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
