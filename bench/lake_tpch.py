"""The 22 TPC-H queries at scale factor 1 through hatiproxy: one proxy on a local DuckDB
file (the baseline) against one proxy whose users' database is a DuckLake (PostgreSQL 15
catalog, Parquet data path), same run, same data. Target (issue 25): the lake takes at
most 1.5x the file's time, per query and in total.

The data comes from DuckDB's own dbgen (the `tpch` extension from the PyPI wheel
`duckdb-extension-tpch==1.5.5`, the `bench` extra: no download at run time), generated
once into a local file and copied into the lake in process before the proxies start.
Each query runs on the file proxy then on the lake proxy, interleaved so that the
shared machine's load hits both alike; each figure is the best of --reps runs.

    .venv/bin/python bench/lake_tpch.py [--sf 1] [--reps 2] [--queries 1,6,14]
        [--variant 'threads1=--duckdb-threads 1']

Each --variant NAME=FLAGS adds one more lake proxy over the same lake, started with those
`serve` flags, timed in the same interleaved loop (a column of its own).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "differential"))
from hatiserver import start_hatiproxy  # noqa: E402
from pgcluster import start_pg  # noqa: E402

from proxy.db.lake import DEFAULT_COMPRESSION  # noqa: E402

TABLES = ("nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem")


def _load(conn: duckdb.DuckDBPyConnection, name: str) -> None:
    import duckdb_extensions

    duckdb_extensions.import_extension(name)
    conn.execute(f"LOAD {name}")


def generate(path: Path, sf: float) -> list[str]:
    """dbgen into a local DuckDB file; returns the 22 query texts."""
    conn = duckdb.connect(str(path))
    try:
        _load(conn, "tpch")
        t = time.perf_counter()
        conn.execute(f"CALL dbgen(sf={sf})")
        print(f"dbgen sf={sf:g}: {time.perf_counter() - t:.0f} s", flush=True)
        return [
            q
            for (q,) in conn.execute(
                "SELECT query FROM tpch_queries() ORDER BY query_nr"
            ).fetchall()
        ]
    finally:
        conn.close()


def copy_to_lake(local: Path, catalog: str, data: Path, codec: str) -> None:
    """The same tables into a new DuckLake, attached as hatiproxy attaches it, its Parquet
    files written with the codec hatiproxy gives a new lake (or --codec)."""
    conn = duckdb.connect()
    try:
        for name in ("ducklake", "postgres"):
            _load(conn, name)
        conn.execute(f"ATTACH '{local}' AS src (READ_ONLY)")
        conn.execute(
            f"ATTACH 'ducklake:{catalog}' AS lake (DATA_INLINING_ROW_LIMIT 0, DATA_PATH '{data}')"
        )
        conn.execute(f"CALL lake.set_option('parquet_compression', '{codec}')")
        t = time.perf_counter()
        for table in TABLES:
            conn.execute(f"CREATE TABLE lake.main.{table} AS SELECT * FROM src.main.{table}")
        print(f"copy into the lake: {time.perf_counter() - t:.0f} s", flush=True)
    finally:
        conn.close()


def timed(conn: psycopg.Connection, sql: str) -> float:
    t = time.perf_counter()
    conn.execute(sql).fetchall()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", type=float, default=1)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--queries", default="", help="comma-separated query numbers (all 22)")
    ap.add_argument("--codec", default=DEFAULT_COMPRESSION, help="the lake's Parquet codec")
    ap.add_argument("--data", default="", help="a DuckDB file dbgen already filled (kept)")
    ap.add_argument(
        "--variant", action="append", default=[], help="NAME=FLAGS: one more lake proxy"
    )
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hati-lake-tpch-"))
    pg = start_pg()
    procs: list[subprocess.Popen] = []
    try:
        local = tmp / "tpch.duckdb"
        if a.data:  # reuse: dbgen at sf=1 takes minutes on a loaded machine
            shutil.copy(a.data, local)
            with duckdb.connect(str(local)) as conn:
                _load(conn, "tpch")
                queries = [
                    q for (q,) in conn.execute(
                        "SELECT query FROM tpch_queries() ORDER BY query_nr"
                    ).fetchall()
                ]  # fmt: skip
        else:
            queries = generate(local, a.sf)
        with psycopg.connect(pg.dsn, autocommit=True) as c:
            c.execute("CREATE DATABASE lake")
        catalog = f"postgres:{pg.dsn} dbname=lake"
        copy_to_lake(local, catalog, tmp / "lake", a.codec)
        proc, file_port = start_hatiproxy(tmp / "file", database=str(local))
        procs.append(proc)
        lake_args = ("--lake-catalog", catalog, "--lake-data", str(tmp / "lake"))
        names = ["lake"] + [v.split("=", 1)[0] for v in a.variant]
        flags = [[]] + [shlex.split(v.split("=", 1)[1]) for v in a.variant]
        ports = [file_port]
        for name, extra in zip(names, flags, strict=True):
            proc, port = start_hatiproxy(tmp / name, *lake_args, *extra, database=None)
            procs.append(proc)
            ports.append(port)
        dsn = "host=127.0.0.1 port={} user=bench dbname=hatidata"
        wanted = [int(n) for n in a.queries.split(",") if n] or list(range(1, 23))
        best = {n: [float("inf")] * len(ports) for n in wanted}
        load_before = os.getloadavg()[0]
        conns = [psycopg.connect(dsn.format(p), autocommit=True) for p in ports]
        try:
            for _ in range(a.reps):
                for n in wanted:
                    for i, conn in enumerate(conns):
                        best[n][i] = min(best[n][i], timed(conn, queries[n - 1]))
        finally:
            for conn in conns:
                conn.close()
        load_after = os.getloadavg()[0]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(60)
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"TPC-H sf={a.sf:g} through hatiproxy, best of {a.reps}, lake codec {a.codec}; load average "
        f"{load_before:.1f} -> {load_after:.1f} (2 cores)"
    )
    head = "".join(f" {name + ' s':>10} {name + '/file':>12}" for name in names)
    print(f"  {'query':>5} {'file s':>8}{head}")
    for n, times in best.items():
        cols = "".join(f" {t:10.3f} {t / times[0]:12.2f}" for t in times[1:])
        print(f"  {'Q' + str(n):>5} {times[0]:8.3f}{cols}")
    totals = [sum(v[i] for v in best.values()) for i in range(len(ports))]
    cols = "".join(f" {t:10.3f} {t / totals[0]:12.2f}" for t in totals[1:])
    print(f"  {'total':>5} {totals[0]:8.3f}{cols}   (target <= 1.5)")
    for i, name in enumerate(names, 1):
        worst = max(best, key=lambda n: best[n][i] / best[n][0])
        print(f"  {name}: worst query Q{worst}: x{best[worst][i] / best[worst][0]:.2f}")


if __name__ == "__main__":
    main()
