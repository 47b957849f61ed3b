"""Point-query QPS: one proxy on a local file (the baseline) against 1 and 2 proxy
processes over one DuckLake (PostgreSQL 15 catalog, shared data path), same run.

Clients are processes (not threads: the client side must not be GIL-bound either),
spread round-robin over the proxies; each loops on a prepared point SELECT for the
measured seconds. Prints QPS per configuration and its ratio to the baseline.

    .venv/bin/python bench/scaleout.py [--clients 4] [--seconds 10] [--rows 10000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "differential"))
from pgcluster import _free_port, start_pg  # noqa: E402

POINT = "SELECT id, v FROM scale_kv WHERE id = %s"


def start_proxy(
    tmp: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    tmp.mkdir(parents=True, exist_ok=True)
    log = open(tmp / "hatiproxy.log", "wb")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(
        [sys.executable, "-m", "proxy", "serve", "--port", str(port), "--mcp-port", "0",
         "--rest-port", "0", "--data-dir", str(tmp / "data"), "--log-level", "WARNING",
         "--embedding-provider", "hash", *args],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((tmp / "hatiproxy.log").read_text())
        try:
            psycopg.connect(_dsn(port)).close()
            return proc, port
        except psycopg.OperationalError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("hatiproxy did not start")


def _dsn(port: int) -> str:
    return f"host=127.0.0.1 port={port} user=bench dbname=hatidata"


def load(port: int, rows: int) -> None:
    with psycopg.connect(_dsn(port), autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS scale_kv")
        c.execute(f"CREATE TABLE scale_kv AS SELECT range::INTEGER AS id, 'v' || range AS v "
                  f"FROM range({rows})")  # fmt: skip


def client(args: tuple[int, float, int, float]) -> int:
    port, seconds, rows, start_at = args
    rnd = random.Random(port)
    with psycopg.connect(_dsn(port), autocommit=True) as c:
        c.execute(POINT, (1,), prepare=True).fetchall()  # warm: prepared, plan cached
        while time.time() < start_at:
            time.sleep(0.01)
        done, end = 0, start_at + seconds
        while time.time() < end:
            c.execute(POINT, (rnd.randrange(rows),), prepare=True).fetchall()
            done += 1
    return done


def measure(ports: list[int], clients: int, seconds: float, rows: int) -> float:
    start_at = time.time() + 1.0
    jobs = [(ports[i % len(ports)], seconds, rows, start_at) for i in range(clients)]
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        counts = pool.map(client, jobs)
    return sum(counts) / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rows", type=int, default=10_000)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hati-scaleout-"))
    pg = start_pg()
    procs: list[subprocess.Popen] = []
    results: dict[str, float] = {}
    try:
        proc, port = start_proxy(tmp / "file")
        procs.append(proc)
        load(port, a.rows)
        results["1 proxy, local file"] = measure([port], a.clients, a.seconds, a.rows)
        proc.terminate()
        proc.wait(30)
        # DuckLake's default data inlining (10 rows) against hatiproxy's (none): each
        # read of an inlining table also queries its inlined rows in the catalog
        for inline, label in (("10", " (inlining 10)"), ("0", "")):
            # a lake (catalog database) of its own each: DuckLake keeps the setting per lake
            with psycopg.connect(pg.dsn, autocommit=True) as c:
                c.execute(f"CREATE DATABASE lake{inline}")
            catalog = f"postgres:{pg.dsn} dbname=lake{inline}"
            lake = ("--lake-catalog", catalog, "--lake-data", str(tmp / f"lake{inline}"))
            ports = []
            for i in range(2):
                env = {"HATIDATA_LAKE_INLINE_ROWS": inline}
                proc, port = start_proxy(tmp / f"lake{inline}-{i}", *lake, env=env)
                procs.append(proc)
                ports.append(port)
            load(ports[0], a.rows)
            results[f"1 proxy, DuckLake{label}"] = measure(ports[:1], a.clients, a.seconds, a.rows)
            results[f"2 proxies, DuckLake{label}"] = measure(ports, a.clients, a.seconds, a.rows)
            for proc in procs[-2:]:
                proc.terminate()
                proc.wait(30)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(30)
        pg.stop()
    base = results["1 proxy, local file"]
    print(f"point SELECT QPS, {a.clients} client processes, {a.seconds:g} s, {a.rows} rows")
    for name, qps in results.items():
        print(f"  {name:38s} {qps:9.0f} QPS   x{qps / base:.2f} of 1 proxy on a local file")
    for label in (" (inlining 10)", ""):
        one, two = results[f"1 proxy, DuckLake{label}"], results[f"2 proxies, DuckLake{label}"]
        print(f"  2 proxies / 1 proxy on the lake{label}: x{two / one:.2f}")


if __name__ == "__main__":
    main()
