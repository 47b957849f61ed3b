"""jsonb result cost: a 100k-row jsonb column fetched from this tree's server and from a
`--before` tree's, A/B interleaved, server CPU seconds per transfer.

    python bench/jsonb_text.py --before /path/to/old/tree [--rows 100000] [--repeat 5]

Each server gets the same table (id int, doc jsonb: five members, a nested object and an
array, ~110 bytes a row, written compact as DuckDB's json_object does). Then `SELECT doc`
in text and binary format and `COPY (SELECT doc) TO STDOUT` are run against each server in
turn, `--repeat` times; the figure is the server process's user+system CPU over the
transfer (/proc/PID/stat), the median of the repeats, per server and as a ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from hatiserver import start_hatiproxy  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
LOAD = (
    "INSERT INTO jt SELECT g, jsonb_build_object('name', 'user ' || g, 'id', g, "
    "'tags', jsonb_build_array('a', 'b'), 'score', g / 8, "
    "'nested', jsonb_build_object('x', g % 10, 'ok', g % 2 = 0)) FROM generate_series(1, {rows}) g"
)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def fetch(conn: psycopg.Connection, kind: str) -> int:
    if kind.startswith("copy"):
        n = 0
        with conn.cursor() as cur, cur.copy("COPY (SELECT doc FROM jt) TO STDOUT") as copy:
            for block in copy:
                n += bytes(block).count(b"\n")
        return n
    with conn.cursor(binary=kind == "binary") as cur:
        cur.execute("SELECT doc FROM jt")
        n = 0
        while batch := cur.fetchmany(50_000):
            n += len(batch)
        return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        servers = {
            "after": start_hatiproxy(tmp / "after"),
            "before": start_hatiproxy(tmp / "before", root=args.before),
        }
        try:
            conns = {}
            for name, (_proc, port) in servers.items():
                conn = psycopg.connect(
                    f"host=127.0.0.1 port={port} user=bench dbname=hatidata", autocommit=True
                )
                conn.adapters.register_loader("jsonb", _Raw)  # the client decodes nothing
                conn.adapters.register_loader("jsonb", _RawBinary)
                conn.execute("CREATE TABLE jt (id int, doc jsonb)")
                conn.execute(LOAD.format(rows=args.rows))
                conns[name] = conn
            sample = {
                n: c.execute("SELECT doc::text FROM jt LIMIT 1").fetchone()
                for n, c in conns.items()
            }
            print(f"rows {args.rows}, load {os.getloadavg()}")
            print(f"sample: {sample}")
            for kind in ("text", "binary", "copy-text"):
                cpu: dict[str, list[float]] = {n: [] for n in servers}
                for _ in range(args.repeat):
                    for name, (proc, _port) in servers.items():
                        got = _measure(proc.pid, lambda c=conns[name], k=kind: fetch(c, k))
                        cpu[name].append(got)
                after, before = (statistics.median(cpu[n]) for n in ("after", "before"))
                print(
                    f"{kind:<10} server CPU s: before {before:.3f}  after {after:.3f}  "
                    f"ratio {after / before:.2f}  (+{(after - before) / args.rows * 1e6:.1f} us/row)"
                )
            print(f"load {os.getloadavg()}")
        finally:
            for proc, _port in servers.values():
                proc.terminate()
                proc.wait(30)


def _measure(pid: int, fn: Callable[[], int]) -> float:
    start = cpu_seconds(pid)
    fn()
    return cpu_seconds(pid) - start


class _Raw(psycopg.adapt.Loader):
    def load(self, data: bytes) -> bytes:
        return bytes(data)


class _RawBinary(_Raw):
    format = psycopg.pq.Format.BINARY


if __name__ == "__main__":
    main()
