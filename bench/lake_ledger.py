"""Ledger appends over one DuckLake: appends per second into one reasoning session from
one client on one proxy (the baseline, same run) and from one client on each of three
proxies at once, how many appends ran again after a conflict (from the proxies' logs),
and the chain verified afterwards. Also one proxy on a local file, for the price of the
lake.

    nice -n 5 .venv/bin/python bench/lake_ledger.py [--seconds 20]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import ServerProcess, start_server  # noqa: E402
from tests.differential.pgcluster import start_pg  # noqa: E402

ARGS = ("--embedding-provider", "hash", "--mcp-port", "0", "--rest-port", "0")


def appends(procs: list[ServerProcess], session: str, seconds: float) -> tuple[int, float]:
    counts = [0] * len(procs)
    start = time.monotonic()

    def run(i: int, p: ServerProcess) -> None:
        with psycopg.connect(p.dsn, autocommit=True) as c:
            while time.monotonic() - start < seconds:
                c.execute("SELECT * FROM log_reasoning_step(%s, %s)", (session, f"{i} step"))
                counts[i] += 1

    threads = [threading.Thread(target=run, args=(i, p)) for i, p in enumerate(procs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts), time.monotonic() - start


def verify(p: ServerProcess, session: str) -> tuple:
    with psycopg.connect(p.dsn, autocommit=True) as c:
        return c.execute(
            "SELECT chain_valid, total_traces FROM verify_chain(%s)", (session,)
        ).fetchone()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    secs = ap.parse_args().seconds
    pg = start_pg()
    data = Path(tempfile.mkdtemp(prefix="lake-ledger-"))
    lake = ("--lake-catalog", f"postgres:{pg.dsn}", "--lake-data", str(data))
    procs: list[ServerProcess] = []
    try:
        local = start_server(Path(tempfile.mkdtemp()), *ARGS, timeout=300)
        procs.append(local)
        n, took = appends([local], "bench-local", secs)
        print(f"local file, 1 client:          {n / took:7.1f} appends/s")
        lakes = [start_server(Path(tempfile.mkdtemp()), *ARGS, *lake, timeout=300)]
        procs += lakes
        n, took = appends(lakes, "bench-1", secs)
        one = n / took
        print(f"lake, 1 proxy, 1 client:       {one:7.1f} appends/s  {verify(lakes[0], 'bench-1')}")
        for _ in range(2):
            lakes.append(start_server(Path(tempfile.mkdtemp()), *ARGS, *lake, timeout=300))
        procs += lakes[1:]
        n, took = appends(lakes, "bench-3", secs)
        three = n / took
        print(
            f"lake, 3 proxies, 1 client each: {three:7.1f} appends/s ({three / one:.2f}x) "
            f"{verify(lakes[2], 'bench-3')}"
        )
    finally:
        for p in procs:
            p.stop()
        pg.stop()
    for p in procs:
        found = re.findall(r"ledger: (\d+) appends, (\d+) run again", p.log())
        if found:
            print(
                f"proxy :{p.port}: {found[-1][0]} appends, {found[-1][1]} retried after a conflict"
            )


if __name__ == "__main__":
    main()
