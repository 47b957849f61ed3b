"""Mixed load: many concurrent connections, tail latency and starvation, PostgreSQL 15 beside.

    python bench/load.py [--conns 50,200] [--seconds 30] [--pg/--no-pg]

A real hatiproxy process (its own data directory, the installed embedding model) and a
throwaway PostgreSQL 15 cluster, one after the other, never at once (2-core machines).
N asyncpg connections (each of `--conns`) each loop over a mix of statement kinds:

  point   SELECT by primary key on a 100k-row table
  insert  INSERT of one row
  search  SELECT ... FROM search_memory($1, top_k := 5)      (hatiproxy only)
  store   SELECT ... FROM store_memory($1)  (no wait; unique content)  (hatiproxy only)

for `--seconds`. Per kind: statements, p50 / p99 / max latency, errors (by SQLSTATE), and
the p99/p50 ratio (target <= 10). Per connection: the longest gap between two completed
statements (from the start of the run); a connection whose longest gap is over 1 s is
counted as starved (target: none); every gap's distribution against the mean (a FIFO
turn queue makes a connection's gap about N / statements/s, so worst/mean near 1 means
fair service and the rest is throughput), statements/s by 0.5 s window (dips are what
lengthen gaps), and the server's runnable threads (sampled from /proc) and context
switches a statement (thread hand-offs: GIL and wake-ups). Per run, the CPU the server (all its threads, or
PostgreSQL's backends) and this client spent a statement: statements/s at saturation is
about the cores over their sum (bench/load_cost.py: the server's CPU by kind). Each connection runs every kind once before the clock
starts (a pool's connections are warm: a fresh connection's first statement reads the
catalog), and that warm-up is reported apart. A connection runs its kinds in turn, so its
gaps are bounded by its slowest kind: store and search pace every connection. PostgreSQL runs the plain-SQL kinds (point, insert)
with the same clients in the same run, for reference.

Then, on an idle server, one connection: `store_memory` without wait, p50 / p99 of
`--single` calls (target p50 < 2 ms), with a point SELECT's p50 on the same connection.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "differential"))
from hatiserver import start_hatiproxy  # noqa: E402
from pgcluster import PGBIN, PgCluster, _as_postgres, start_pg  # noqa: E402

ROWS = 100_000
SETUP = (
    "CREATE TABLE bench_kv (id integer PRIMARY KEY, a integer, b text, c double precision)",
    "INSERT INTO bench_kv SELECT g, g * 7 % 1000, 'row-' || g, g * 0.5 "
    f"FROM generate_series(1, {ROWS}) AS s(g)",
    "CREATE TABLE bench_ins (conn integer, n integer, v text)",
)
SQL = {
    "point": "SELECT id, a, b, c FROM bench_kv WHERE id = $1",
    "insert": "INSERT INTO bench_ins (conn, n, v) VALUES ($1, $2, $3)",
    "search": "SELECT memory_id, score FROM search_memory($1, top_k := 5)",
    "store": "SELECT memory_id FROM store_memory($1)",
}
PLAIN = ("point", "insert")
WORDS = [
    "revenue",
    "customer",
    "churn",
    "quarter",
    "pricing",
    "invoice",
    "shipment",
    "warehouse",
    "supplier",
    "contract",
    "renewal",
    "discount",
    "forecast",
    "budget",
    "hiring",
    "onboarding",
    "latency",
    "outage",
    "deploy",
    "rollback",
    "schema",
    "index",
    "migration",
    "backup",
    "replica",
    "region",
    "tenant",
    "billing",
    "refund",
    "audit",
]
SEED_MEMORIES = 300
STARVED_S = 1.0
SHOW_SERIES = False  # --series: print statements/s of every 0.5 s window


@dataclass
class Stats:
    lat: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    gaps: list[float] = field(default_factory=list)  # per connection: longest gap (s)
    all_gaps: list[float] = field(default_factory=list)  # every gap, every connection (s)
    done_at: list[float] = field(default_factory=list)  # each completion, s from the start
    seconds: float = 0.0  # the measured time (statements completing after it are the tail)
    runnable: list[int] = field(default_factory=list)  # server threads runnable, sampled
    switches: tuple[int, int] = (0, 0)  # server's voluntary, involuntary context switches
    first: list[float] = field(default_factory=list)  # warm-up statements (fresh connections)


def sentence(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


# --- servers -------------------------------------------------------------------------------


def pg_allow(cluster: PgCluster, max_conns: int) -> None:
    """PostgreSQL's default max_connections is 100: raise it and restart (same options)."""
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET max_connections = {max_conns}")
    subprocess.run(
        _as_postgres([f"{PGBIN}/pg_ctl", "-D", cluster.data, "-w", "-m", "fast",
                      "-l", os.path.join(cluster.base, "log"), "restart"]),
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip


def setup(dsn: str, agent: bool) -> None:
    rng = random.Random(7)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for sql in SETUP:
            conn.execute(sql)
        if not agent:
            return
        # Memories to search: stored, then waited on until every one is embedded.
        for i in range(SEED_MEMORIES):
            conn.execute("SELECT 1 FROM store_memory(%s)", (f"seed {i}: {sentence(rng, 12)}",))
        conn.execute("SELECT 1 FROM store_memory('seed last', wait := true)")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM _hatidata_agent_memory WHERE NOT has_embedding"
            ).fetchone()
            if row and row[0] == 0:
                return
            time.sleep(0.5)
        raise RuntimeError("seed memories were not embedded within 120 s")


# --- the load ----------------------------------------------------------------------------------


async def call(
    conn: asyncpg.Connection, kind: str, i: int, n: int, rng: random.Random, stats: Stats
) -> bool:
    """One statement of `kind`; False when the connection is lost."""
    if kind == "point":
        args: tuple = (rng.randint(1, ROWS),)
    elif kind == "insert":
        args = (i, n, sentence(rng, 4))
    elif kind == "search":
        args = (sentence(rng, 3),)
    else:
        args = (f"conn {i} n {n}: {sentence(rng)}",)
    try:
        if kind == "insert":
            await conn.execute(SQL[kind], *args)
        else:
            await conn.fetch(SQL[kind], *args)
    except asyncpg.PostgresError as exc:
        stats.errors[f"{kind} {exc.sqlstate}"] += 1
    except (OSError, asyncpg.InterfaceError) as exc:
        stats.errors[f"{kind} {type(exc).__name__}"] += 1
        return False
    return True


async def run_load(
    port: int,
    user: str,
    db: str,
    conns: int,
    seconds: float,
    kinds: tuple[str, ...],
    pid: int,
    threads: bool = True,
) -> tuple[Stats, float, tuple[float, float]]:
    """Returns the stats, the measured seconds and the CPU seconds the server (`pid`) and
    this client spent meanwhile: statements/s at saturation is about the machine's cores
    over the two per statement. `threads`: sample `pid`'s threads (one process)."""
    stats = Stats(seconds=seconds)
    gate = asyncio.Semaphore(20)  # connect a few at a time, as a pool warming up would

    async def connect() -> asyncpg.Connection:
        async with gate:
            return await asyncpg.connect(
                host="127.0.0.1", port=port, user=user, database=db, timeout=60
            )

    connections = await asyncio.gather(*(connect() for _ in range(conns)))
    go = asyncio.Event()
    all_warm = asyncio.Event()
    warm: list[int] = []
    start = end = 0.0

    async def worker(i: int, conn: asyncpg.Connection) -> None:
        rng = random.Random(i)
        order = list(kinds)
        rng.shuffle(order)
        n = 0
        # Warm-up, before the clock: each kind once, as on a pool's connections in use
        # (a fresh connection's first statement reads the catalog; reported apart).
        for kind in order:
            t0 = time.perf_counter()
            await call(conn, kind, i, -1, rng, stats)
            stats.first.append(time.perf_counter() - t0)
        warm.append(i)
        if len(warm) == len(connections):
            all_warm.set()
        await go.wait()
        last = start
        longest = 0.0
        while True:
            kind = order[n % len(order)]
            n += 1
            t0 = time.perf_counter()
            if not await call(conn, kind, i, n, rng, stats):
                break
            t1 = time.perf_counter()
            stats.lat[kind].append(t1 - t0)
            stats.all_gaps.append(t1 - last)
            stats.done_at.append(t1 - start)
            longest = max(longest, t1 - last)
            last = t1
            if t1 >= end:
                break
        stats.gaps.append(longest)

    tasks = [asyncio.create_task(worker(i, c)) for i, c in enumerate(connections)]
    await all_warm.wait()
    cpu0 = proc_cpu(pid), own_cpu()
    switches0 = ctxt_switches(pid) if threads else (0, 0)
    start = time.perf_counter()
    end = start + seconds
    go.set()
    sampler = asyncio.create_task(sample_runnable(pid, stats.runnable)) if threads else None
    await asyncio.gather(*tasks)
    if sampler is not None:
        sampler.cancel()
    elapsed = time.perf_counter() - start
    cpu = proc_cpu(pid) - cpu0[0], own_cpu() - cpu0[1]
    switches1 = ctxt_switches(pid) if threads else (0, 0)
    stats.switches = (switches1[0] - switches0[0], switches1[1] - switches0[1])
    await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)
    return stats, elapsed, cpu


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid` and its children (PostgreSQL's
    backends), all threads, from Linux /proc."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def ctxt_switches(pid: int) -> tuple[int, int]:
    """Voluntary and involuntary context switches of all of `pid`'s threads (Linux)."""
    vol = invol = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                vol += int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                invol += int(line.split()[1])
    return vol, invol


async def sample_runnable(pid: int, out: list[int]) -> None:
    """Every 0.25 s: how many of `pid`'s threads are runnable (state R)."""
    while True:
        n = 0
        for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
            try:
                n += stat.read_text().rsplit(")", 1)[1].split()[0] == "R"
            except (OSError, IndexError):
                continue
        out.append(n)
        await asyncio.sleep(0.25)


def pg_pid(cluster: PgCluster) -> int:
    """The postmaster's pid, parent of the backends."""
    return int(Path(cluster.data, "postmaster.pid").read_text().split()[0])


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def report(
    label: str,
    stats: Stats,
    elapsed: float,
    kinds: tuple[str, ...],
    cpu: tuple[float, float] | None = None,
) -> dict[str, float]:
    total = sum(len(v) for v in stats.lat.values())
    print(f"\n{label}: {total:,} statements in {elapsed:.1f} s ({total / elapsed:,.0f}/s)")
    if cpu is not None and total:
        print(
            f"  CPU per statement: server {cpu[0] / total * 1e3:.1f} ms "
            f"({cpu[0] / elapsed:.2f} cores), client {cpu[1] / total * 1e3:.1f} ms "
            f"({cpu[1] / elapsed:.2f} cores)"
        )
    print(f"  {'kind':<8}{'count':>8}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'p99/p50':>9}")
    ratios = {}
    for kind in kinds:
        lat = stats.lat.get(kind, [])
        p50, p99 = pct(lat, 0.5) * 1e3, pct(lat, 0.99) * 1e3
        ratios[kind] = p99 / p50 if lat else float("nan")
        print(
            f"  {kind:<8}{len(lat):>8}{p50:>10.1f}{p99:>10.1f}{max(lat, default=0) * 1e3:>10.1f}"
            f"{ratios[kind]:>8.1f}x"
        )
    gaps = sorted(stats.gaps)
    starved = sum(1 for g in gaps if g > STARVED_S)
    print(
        f"  longest gap per connection: median {pct(gaps, 0.5) * 1e3:.0f} ms, "
        f"worst {gaps[-1] * 1e3 if gaps else 0:.0f} ms; starved (> {STARVED_S:.0f} s): "
        f"{starved} of {len(gaps)}"
    )
    every = stats.all_gaps
    if every:
        mean = sum(every) / len(every)
        print(
            f"  gaps between a connection's statements: mean {mean * 1e3:.0f} ms, p50 "
            f"{pct(every, 0.5) * 1e3:.0f}, p99 {pct(every, 0.99) * 1e3:.0f}, p99.9 "
            f"{pct(every, 0.999) * 1e3:.0f} ms; worst/mean {max(every) / mean:.2f}, "
            f"p99/mean {pct(every, 0.99) / mean:.2f}"
        )
    if stats.done_at:
        # Statements completed per 0.5 s window: a FIFO queue turns a dip in throughput
        # into a longer gap for every connection waiting through it.
        windows = Counter(int(t / 0.5) for t in stats.done_at if t < stats.seconds)
        per = [windows.get(w, 0) * 2 for w in range(int(stats.seconds / 0.5))]
        at = sorted(t for t in stats.done_at if t < stats.seconds)
        pause = max((b - a for a, b in zip(at, at[1:], strict=False)), default=0.0)
        print(
            f"  statements/s by 0.5 s window: min {min(per)}, p10 {pct(per, 0.1)}, "
            f"median {pct(per, 0.5)}, max {max(per)}; longest pause with none done "
            f"{pause * 1e3:.0f} ms"
        )
        if SHOW_SERIES:
            print("  statements/s, each 0.5 s window in turn:", " ".join(map(str, per)))
    if stats.runnable:
        run = stats.runnable
        print(
            f"  server threads runnable (sampled): mean {sum(run) / len(run):.1f}, "
            f"max {max(run)}; context switches/statement: voluntary "
            f"{stats.switches[0] / max(total, 1):.1f}, involuntary "
            f"{stats.switches[1] / max(total, 1):.1f}"
        )
    first = stats.first
    print(
        f"  warm-up (each kind once per fresh connection, before the clock): "
        f"p50 {pct(first, 0.5) * 1e3:.0f} ms, max {max(first, default=0) * 1e3:.0f} ms"
    )
    errors = ", ".join(f"{k}: {v}" for k, v in sorted(stats.errors.items())) or "none"
    print(f"  errors: {errors}")
    return ratios


async def single_store(port: int, n: int) -> None:
    conn = await asyncpg.connect(host="127.0.0.1", port=port, user="single", database="hatidata")
    rng = random.Random(3)
    store, point = [], []
    for i in range(n + 20):
        t0 = time.perf_counter()
        await conn.fetch(SQL["store"], f"single {i}: {sentence(rng)}")
        t1 = time.perf_counter()
        await conn.fetch(SQL["point"], rng.randint(1, ROWS))
        t2 = time.perf_counter()
        if i >= 20:  # warmed up
            store.append(t1 - t0)
            point.append(t2 - t1)
    await conn.close()
    print(f"\nOne connection, idle server, {n} calls each:")
    print(
        f"  store_memory (no wait)  p50 {pct(store, 0.5) * 1e3:6.2f} ms   "
        f"p99 {pct(store, 0.99) * 1e3:6.2f} ms   (target p50 < 2 ms)"
    )
    print(
        f"  point SELECT            p50 {pct(point, 0.5) * 1e3:6.2f} ms   "
        f"p99 {pct(point, 0.99) * 1e3:6.2f} ms"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--conns", default="50,200", help="connection counts, comma separated")
    ap.add_argument("--seconds", type=float, default=30.0, help="measured time per run")
    ap.add_argument("--single", type=int, default=300, help="single-connection store calls")
    ap.add_argument("--no-pg", action="store_true", help="skip the PostgreSQL reference")
    ap.add_argument("--series", action="store_true", help="statements/s of each 0.5 s window")
    ap.add_argument("--server-arg", action="append", default=[], help="extra `serve` argument")
    args = ap.parse_args()
    counts = [int(c) for c in args.conns.split(",")]
    global SHOW_SERIES
    SHOW_SERIES = args.series
    try:
        import uvloop

        uvloop.install()  # the client's own loop should cost as little as it can
    except ImportError:
        pass
    print(f"{os.cpu_count()} CPUs, load average before: {os.getloadavg()[0]:.2f}")
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="hati-load-"))
    max_conns = max(counts) + 20
    proc, port = start_hatiproxy(
        tmp, "--max-connections", str(max_conns), *args.server_arg,
        database=str(tmp / "load.duckdb"),
    )  # fmt: skip
    kinds = ("point", "insert", "search", "store")
    results: dict[str, dict[str, float]] = {}
    try:
        setup(f"host=127.0.0.1 port={port} user=bench dbname=hatidata", agent=True)
        asyncio.run(single_store(port, args.single))
        for n in counts:
            stats, elapsed, cpu = asyncio.run(
                run_load(port, "bench", "hatidata", n, args.seconds, kinds, proc.pid)
            )
            results[f"hatiproxy/{n}"] = report(
                f"hatiproxy, {n} connections", stats, elapsed, kinds, cpu
            )
            print(f"  load average now: {os.getloadavg()[0]:.2f}")
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    if not args.no_pg:
        pg = start_pg()
        try:
            pg_allow(pg, max_conns)
            setup(pg.dsn, agent=False)
            for n in counts:
                stats, elapsed, cpu = asyncio.run(
                    run_load(
                        pg.port, "postgres", "postgres", n, args.seconds, PLAIN, pg_pid(pg), False
                    )
                )
                results[f"pg/{n}"] = report(
                    f"PostgreSQL 15, {n} connections (plain SQL kinds)", stats, elapsed, PLAIN, cpu
                )
        finally:
            pg.stop()
    print("\np99/p50 per kind (target <= 10x)")
    for name, ratios in results.items():
        print(f"  {name:<16}" + "  ".join(f"{k} {v:5.1f}x" for k, v in ratios.items()))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
