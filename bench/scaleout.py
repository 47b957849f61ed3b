"""Point-query and mixed-workload QPS: one proxy on a local file (the baseline) against
1, 2 and 4 proxy processes over one DuckLake (PostgreSQL 15 catalog, shared data path),
same run. Target (issue 25): 2 lake proxies give >= 1.6x one lake proxy's throughput.

Clients are processes (not threads: the client side must not be GIL-bound either),
spread round-robin over the proxies; each loops for the measured seconds on either a
prepared point SELECT ("point") or a mix ("mixed": 70% point SELECT, 20% one-row INSERT,
10% a 100-row range aggregate). Prints QPS per configuration, its ratio to the local
file, the scaling ratios between lake configurations, and the load average.

    .venv/bin/python bench/scaleout.py [--clients 4] [--seconds 10] [--rows 10000]
        [--proxies 1,2,4] [--inlining]
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
from concurrent.futures import ThreadPoolExecutor
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
    deadline = time.monotonic() + 300  # a loaded shared machine
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
        c.execute("DROP TABLE IF EXISTS scale_log")
        c.execute("CREATE TABLE scale_log (client INTEGER, n INTEGER)")


RANGE = "SELECT count(*), sum(id) FROM scale_kv WHERE id BETWEEN %s AND %s + 100"
INSERT = "INSERT INTO scale_log VALUES (%s, %s)"


def client(args: tuple[int, float, int, float, str, int]) -> float:
    """This client's statements per second over its own window (a client that came up
    after start_at, on a loaded machine, still runs the full window)."""
    port, seconds, rows, start_at, workload, seed = args
    rnd = random.Random(seed)
    with psycopg.connect(_dsn(port), autocommit=True) as c:
        c.execute(POINT, (1,), prepare=True).fetchall()  # warm: prepared, plan cached
        while time.time() < start_at:
            time.sleep(0.01)
        begun = time.time()
        done, end = 0, begun + seconds
        while time.time() < end:
            r = rnd.random() if workload == "mixed" else 0.0
            if r < 0.7:
                c.execute(POINT, (rnd.randrange(rows),), prepare=True).fetchall()
            elif r < 0.9:
                c.execute(INSERT, (seed, done), prepare=True)
            else:
                x = rnd.randrange(rows)
                c.execute(RANGE, (x, x), prepare=True).fetchall()
            done += 1
    return done / (time.time() - begun)


def measure(ports: list[int], clients: int, seconds: float, rows: int, workload: str) -> float:
    start_at = time.time() + 5.0  # spawning clients takes seconds on a loaded machine
    jobs = [(ports[i % len(ports)], seconds, rows, start_at, workload, i) for i in range(clients)]
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        return sum(pool.map(client, jobs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--proxies", default="1,2,4", help="lake proxy counts to measure")
    ap.add_argument(
        "--inlining", action="store_true", help="also 1 lake proxy with DuckLake's inlining (10)"
    )
    a = ap.parse_args()
    counts = [int(n) for n in a.proxies.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="hati-scaleout-"))
    pg = start_pg()
    procs: list[subprocess.Popen] = []
    results: dict[tuple[str, str], float] = {}
    loads: list[float] = [os.getloadavg()[0]]
    workloads = ("point", "mixed")

    def run_all(label: str, ports: list[int]) -> None:
        for w in workloads:
            load(ports[0], a.rows)
            results[(label, w)] = measure(ports, a.clients, a.seconds, a.rows, w)
            loads.append(os.getloadavg()[0])

    try:
        proc, port = start_proxy(tmp / "file")
        procs.append(proc)
        run_all("1 proxy, local file", [port])
        proc.terminate()
        proc.wait(30)
        lakes = [("0", "")] + ([("10", " (inlining 10)")] if a.inlining else [])
        for inline, label in lakes:
            # a lake (catalog database) of its own each: DuckLake keeps the setting per lake
            with psycopg.connect(pg.dsn, autocommit=True) as c:
                c.execute(f"CREATE DATABASE lake{inline}")
            catalog = f"postgres:{pg.dsn} dbname=lake{inline}"
            lake = ("--lake-catalog", catalog, "--lake-data", str(tmp / f"lake{inline}"))
            env = {"HATIDATA_LAKE_INLINE_ROWS": inline}
            n_proxies = max(counts) if inline != "10" else 1
            with ThreadPoolExecutor(n_proxies) as pool:  # started at once (they may race)
                futures = [
                    pool.submit(start_proxy, tmp / f"lake{inline}-{i}", *lake, env=env)
                    for i in range(n_proxies)
                ]
                started = [f.result() for f in futures]
            procs.extend(p for p, _ in started)
            ports = [port for _, port in started]
            for n in counts if inline == "0" else [1]:
                run_all(f"{n} prox{'y' if n == 1 else 'ies'}, DuckLake{label}", ports[:n])
            for proc in procs[-len(ports) :]:
                proc.terminate()
                proc.wait(30)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(30)
        pg.stop()
    print(
        f"QPS, {a.clients} client processes, {a.seconds:g} s each, {a.rows} rows; load average "
        f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
    )
    for w in workloads:
        base = results[("1 proxy, local file", w)]
        print(f" {w}:")
        for (name, wl), qps in results.items():
            if wl == w:
                print(f"  {name:34s} {qps:8.0f} QPS   x{qps / base:.2f} of the local file")
        one = results.get(("1 proxy, DuckLake", w))
        for n in counts:
            more = results.get((f"{n} proxies, DuckLake", w))
            if one and more and n > 1:
                print(
                    f"  {n} lake proxies / 1 lake proxy: x{more / one:.2f}   (target for 2: >= 1.6)"
                )


if __name__ == "__main__":
    main()
