"""CPU per statement, by kind: where bench/load.py's time goes on the server.

    python bench/load_cost.py [--n 200] [--kind insert ...] [--server-arg ...]

One connection runs each kind of bench/load.py `--n` times in a row on an otherwise idle
server; the server's process CPU (all its threads: DuckDB, the embedders, the event
loops; from /proc) and this client's CPU are read before and after, and for kinds that
leave background work (store_memory's embedding) after that work is done. CPU, not wall
time, is what a 2-core machine runs out of under load: statements/s at saturation is
about cores / (server + client CPU per statement). Each kind's server CPU is also split
by thread (the connection's thread, the embedding threads, the DuckDB hand-off pool, the
journal; "native": DuckDB's and onnxruntime's own threads) when py-spy is installed
(or PYSPY names it): it names Python's threads, which the OS does not.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
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


def thread_names(pid: int) -> dict[str, str]:
    """OS thread id -> Python thread name (numbered pool threads together: hati-embed_0
    and hati-embed_1 are hati-embed), from `py-spy dump` when it is installed (Python does
    not give its threads OS names); threads it does not list are native ones: DuckDB's
    task scheduler, onnxruntime's pool."""
    spy = os.environ.get("PYSPY") or shutil.which("py-spy")
    if not spy:
        return {}
    try:
        out = subprocess.run(
            [spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    names = {}
    for tid, name in re.findall(r'^Thread (\d+) \(\w+\): "(.+)"', out, re.M):
        names[tid] = re.sub(r"_\d+$", "", name)
    return names


def thread_cpu(pid: int, names: dict[str, str]) -> Counter[str]:
    """CPU seconds of `pid`'s threads by name (`thread_names`; "native": the others)."""
    out: Counter[str] = Counter()
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        name = names.get(stat.parent.name, "native" if names else "all")
        out[name] += (int(fields[11]) + int(fields[12])) / TICK
    return out


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
        f"{'kind':<8}{'server ms':>11}{'client ms':>11}{'wall ms':>10}   per statement, {n} in a row;"
        " the server's ms by thread"
    )
    for kind in kinds:
        for i in range(20):  # warm
            await run(conn, kind, -i, rng)
        await drained(conn)
        s0, c0, w0 = proc_cpu(pid), own_cpu(), time.perf_counter()
        names = thread_names(pid)
        t0 = thread_cpu(pid, names)
        for i in range(n):
            await run(conn, kind, i, rng)
        w1 = time.perf_counter()
        await drained(conn)
        s1, c1 = proc_cpu(pid), own_cpu()
        t1 = thread_cpu(pid, names)
        t1.subtract(t0)
        by_thread = ", ".join(
            f"{name} {sec / n * 1e3:.2f}" for name, sec in t1.most_common() if sec / n >= 5e-5
        )
        print(
            f"{kind:<8}{(s1 - s0) / n * 1e3:>11.2f}{(c1 - c0) / n * 1e3:>11.2f}"
            f"{(w1 - w0) / n * 1e3:>10.2f}   {by_thread}"
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
