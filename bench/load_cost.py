"""CPU per statement, by kind: where bench/load.py's time goes on the server.

    python bench/load_cost.py [--n 200] [--kind insert ...] [--server-arg ...]

One connection runs each kind of bench/load.py `--n` times in a row on an otherwise idle
server; the server's process CPU (all its threads: DuckDB, the embedders, the event
loops; from /proc) and this client's CPU are read before and after, and for kinds that
leave background work (store_memory's embedding) after that work is done. CPU, not wall
time, is what a 2-core machine runs out of under load: statements/s at saturation is
about cores / (server + client CPU per statement).
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
from collections.abc import Sequence
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hatiserver import start_hatiproxy  # noqa: E402
from load import ROWS, SQL, sentence, setup  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid` (all threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def drained(conn: asyncpg.Connection) -> None:
    """Wait until every stored memory has its embedding (store's deferred work)."""
    for _ in range(600):
        if not await conn.fetchval(
            "SELECT count(*) FROM _hatidata_agent_memory WHERE NOT has_embedding"
        ):
            return
        await asyncio.sleep(0.05)


KINDS = ("point", "insert", "search", "store")


async def measure(port: int, pid: int, n: int, kinds: Sequence[str] = KINDS) -> None:
    conn = await asyncpg.connect(host="127.0.0.1", port=port, user="bench", database="hatidata")
    rng = random.Random(5)
    print(
        f"{'kind':<8}{'server ms':>11}{'client ms':>11}{'wall ms':>10}   per statement, {n} in a row"
    )
    for kind in kinds:
        for i in range(20):  # warm
            await run(conn, kind, -i, rng)
        await drained(conn)
        s0, c0, w0 = proc_cpu(pid), own_cpu(), time.perf_counter()
        for i in range(n):
            await run(conn, kind, i, rng)
        w1 = time.perf_counter()
        await drained(conn)
        s1, c1 = proc_cpu(pid), own_cpu()
        print(
            f"{kind:<8}{(s1 - s0) / n * 1e3:>11.2f}{(c1 - c0) / n * 1e3:>11.2f}"
            f"{(w1 - w0) / n * 1e3:>10.2f}"
        )
    await conn.close()


async def run(conn: asyncpg.Connection, kind: str, i: int, rng: random.Random) -> None:
    if kind == "point":
        await conn.fetch(SQL[kind], rng.randint(1, ROWS))
    elif kind == "insert":
        await conn.execute(SQL[kind], 0, i, sentence(rng, 4))
    elif kind == "search":
        await conn.fetch(SQL[kind], sentence(rng, 3))
    else:
        await conn.fetch(SQL[kind], f"cost {i} {time.time()}: {sentence(rng)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="statements per kind")
    ap.add_argument(
        "--kind", action="append", choices=KINDS, help="only this kind (repeatable); all by default"
    )
    ap.add_argument("--server-arg", action="append", default=[], help="extra `serve` argument")
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs, load average: {os.getloadavg()[0]:.2f}")
    tmp = Path(tempfile.mkdtemp(prefix="hati-cost-"))
    proc, port = start_hatiproxy(tmp, *args.server_arg, database=str(tmp / "load.duckdb"))
    try:
        kinds = tuple(args.kind or KINDS)
        agent = any(k in ("search", "store") for k in kinds)
        setup(f"host=127.0.0.1 port={port} user=bench dbname=hatidata", agent=agent)
        asyncio.run(measure(port, proc.pid, args.n, kinds))
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
