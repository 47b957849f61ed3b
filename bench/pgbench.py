"""pgbench 15 against hatiproxy and a throwaway PostgreSQL 15, same run.

    python bench/pgbench.py [--seconds 10] [--max-tries 1000]

Each server gets `pgbench -i -s 1`, then the built-in TPC-B script with 1 client and with
4 clients (2 threads), in the simple query mode (pgbench's default: every statement a new
text) and with -M prepared, and the select-only script (-S) with 1 and 4 clients, all with
--max-tries (a write-write conflict is 40001 on hatiproxy, which pgbench retries;
PostgreSQL's default READ COMMITTED waits on the row lock instead, so it retries
nothing). Prints TPS, average latency, failed and retried transactions per run, the
hatiproxy/PostgreSQL TPS ratio, and whether the balances add up after the TPC-B runs.

hatiproxy runs on an in-memory database, PostgreSQL with fsync off (bench/wire.py's
setup): neither waits on the disk.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "differential"))
sys.path.insert(0, str(ROOT / "bench"))
from pgcluster import PGBIN, start_pg  # noqa: E402
from wire import start_hatiproxy  # noqa: E402

PGBENCH = f"{PGBIN}/pgbench"
RUNS: tuple[tuple[str, list[str]], ...] = (
    ("TPC-B, 1 client", ["-c", "1"]),
    ("TPC-B, 4 clients", ["-c", "4", "-j", "2"]),
    # Parse once, Bind/Execute after: hatiproxy transpiles each statement text once
    ("TPC-B -M prepared, 1 client", ["-M", "prepared", "-c", "1"]),
    ("TPC-B -M prepared, 4 clients", ["-M", "prepared", "-c", "4", "-j", "2"]),
    ("select-only, 1 client", ["-S", "-c", "1"]),
    ("select-only, 4 clients", ["-S", "-c", "4", "-j", "2"]),
)
SUMS = (
    "SELECT (SELECT sum(abalance) FROM pgbench_accounts),"
    " (SELECT sum(bbalance) FROM pgbench_branches),"
    " (SELECT sum(tbalance) FROM pgbench_tellers)"
)


@dataclass
class Figures:
    tps: float
    latency_ms: float
    processed: int
    failed: int
    retried: int
    retries: int

    def line(self, label: str) -> str:
        return (
            f"  {label:<30} {self.tps:>9.1f} tps  {self.latency_ms:>8.2f} ms avg"
            f"  {self.processed:>7} done  {self.failed:>5} failed"
            f"  {self.retried:>6} retried ({self.retries} retries)"
        )


def _number(report: str, label: str) -> float:
    match = re.search(rf"^{re.escape(label)}\D*?([\d.]+)", report, re.M)
    return float(match[1]) if match else 0.0


def parse(report: str) -> Figures:
    return Figures(
        tps=_number(report, "tps ="),
        latency_ms=_number(report, "latency average ="),
        processed=int(_number(report, "number of transactions actually processed:")),
        failed=int(_number(report, "number of failed transactions:")),
        retried=int(_number(report, "number of transactions retried:")),
        retries=int(_number(report, "total number of retries:")),
    )


def pgbench(conn: list[str], *args: str, timeout: float) -> str:
    out = subprocess.run([PGBENCH, *conn, *args], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"pgbench {' '.join(args)} failed:\n{out.stdout}{out.stderr}")
    return out.stdout + out.stderr


def bench(name: str, host: str, port: int, user: str, db: str, a: argparse.Namespace) -> dict:
    conn = ["-h", host, "-p", str(port), "-U", user, db]
    print(f"{name}:")
    report = pgbench(conn, "-i", "-s", "1", "-q", timeout=300)  # (its report is stderr)
    init = re.search(r"done in ([\d.]+ s)", report)
    print(f"  pgbench -i -s 1 done in {init[1] if init else '?'}")
    figures: dict[str, Figures] = {}
    for label, args in RUNS:
        report = pgbench(
            conn, *args, "-T", str(a.seconds), f"--max-tries={a.max_tries}",
            timeout=a.seconds * 6 + 60,
        )  # fmt: skip
        figures[label] = parse(report)
        print(figures[label].line(label), flush=True)
    with psycopg.connect(host=host, port=port, user=user, dbname=db, autocommit=True) as c:
        row = c.execute(SUMS).fetchone()
    assert row is not None
    print(f"  balances: accounts {row[0]}, branches {row[1]}, tellers {row[2]}"
          f" -> {'consistent' if len(set(row)) == 1 else 'INCONSISTENT'}")  # fmt: skip
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="seconds per pgbench run")
    parser.add_argument("--max-tries", type=int, default=1000)
    a = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hati-pgbench-"))
    proc, port = start_hatiproxy(tmp)
    try:
        hati = bench("hatiproxy (DuckDB in memory)", "127.0.0.1", port, "bench", "hatidata", a)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    cluster = start_pg()
    try:
        pg = bench("PostgreSQL 15 (fsync off)", "127.0.0.1", cluster.port, "postgres",
                   "postgres", a)  # fmt: skip
    finally:
        cluster.stop()
    print("hatiproxy / PostgreSQL TPS:")
    for label, _ in RUNS:
        ratio = hati[label].tps / pg[label].tps if pg[label].tps else float("nan")
        print(f"  {label:<30} {ratio:>6.2f}x")


if __name__ == "__main__":
    main()
