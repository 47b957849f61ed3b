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
`serve` flags (VAR=value words go to its environment, e.g.
'nocache=HATIDATA_LAKE_PARQUET_METADATA_CACHE=0'), timed in the same interleaved loop (a
column of its own). Each --layout NAME=OPTION=VALUE,... adds one more lake written with
those DuckLake options (e.g. 'v1=parquet_version=1'; VAR=value words and flags may
follow, as for --variant), and a proxy on it.

Besides wall-clock, each query's CPU is read from /proc: the proxy process's (all its
threads) and the catalog cluster's (the postmaster and its backends), so a ratio can be
told from the machine's load. --catalog-log then runs each query once more per lake proxy
with PostgreSQL's log_statement = all and prints how many catalog statements it sent.
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

from proxy.db.lake import DEFAULT_COMPRESSION, attach_lake, detach_lake  # noqa: E402

TABLES = ("nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem")


def _load(conn: duckdb.DuckDBPyConnection, name: str) -> None:
    try:  # the PyPI wheel (the `bench` extra); else an extension DuckDB already installed
        import duckdb_extensions

        duckdb_extensions.import_extension(name)
    except ImportError:
        pass
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


def copy_to_lake(
    local: Path, catalog: str, data: Path, codec: str, options: dict[str, str] | None = None
) -> None:
    """The same tables into a new DuckLake, attached as hatiproxy attaches it (so written
    with the layout hatiproxy gives a new lake), its Parquet files with that codec and
    these DuckLake options (set_option) besides."""
    conn = duckdb.connect()
    try:
        _load(conn, "tpch")  # before the lake is the default database
        local_db = attach_lake(conn, catalog, str(data))
        for option, value in {"parquet_compression": codec, **(options or {})}.items():
            conn.execute(f"CALL lake.set_option('{option}', '{value}')")
        conn.execute(f"ATTACH '{local}' AS src (READ_ONLY)")
        t = time.perf_counter()
        for table in TABLES:
            conn.execute(f"CREATE TABLE lake.main.{table} AS SELECT * FROM src.main.{table}")
        print(f"copy into the lake: {time.perf_counter() - t:.0f} s", flush=True)
        for table in ("lineitem", "orders"):
            files = conn.execute(
                f"SELECT data_file, data_file_size_bytes FROM ducklake_list_files('lake', '{table}')"
            ).fetchall()
            groups, codecs = conn.execute(
                "SELECT count(DISTINCT (file_name, row_group_id)), string_agg(DISTINCT compression) "
                "FROM parquet_metadata(?)",
                [[f for f, _ in files]],
            ).fetchone()
            size = sum(b for _, b in files) / 2**20
            print(f"  {table}: {len(files)} file(s), {size:.0f} MB, {groups} row groups, {codecs}")
        conn.execute("DETACH src")
        detach_lake(conn, local_db)
    finally:
        conn.close()


TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of these processes (each with all its threads)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # a backend that exited meanwhile
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def cluster_pids(pg_data: str) -> list[int]:
    """The catalog cluster's postmaster and its children (backends, background workers)."""
    with open(os.path.join(pg_data, "postmaster.pid")) as f:
        postmaster = f.readline().strip()
    pids = [int(postmaster)]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[1] == postmaster:
                        pids.append(int(entry))
            except OSError:
                continue
    return pids


def timed(conn: psycopg.Connection, sql: str, pids: list[int]) -> tuple[float, float]:
    """Wall-clock and the CPU of `pids` for one run of sql."""
    c = cpu_s(pids)
    t = time.perf_counter()
    conn.execute(sql).fetchall()
    return time.perf_counter() - t, cpu_s(pids) - c


def catalog_statements(
    pg_dsn: str, log: Path, conn: psycopg.Connection, db: str, queries: dict[int, str]
) -> dict[int, int]:
    """How many statements each query makes the lake proxy send to its catalog database
    db: PostgreSQL's own log (log_statement = all), the lines of the users' lake's
    backends there (a backend that ever names the agent lake's metadata schema serves
    the agent layer's pool and is left out: its poller runs 4 times a second)."""
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("ALTER SYSTEM SET log_statement = 'all'")
        c.execute("ALTER SYSTEM SET log_line_prefix = '%p %d '")
        c.execute("SELECT pg_reload_conf()")
    time.sleep(1)
    phase = log.stat().st_size
    counts = {}
    try:
        for n, sql in queries.items():
            conn.execute(sql).fetchall()  # warm: the pool's connections exist
            start = log.stat().st_size
            conn.execute(sql).fetchall()
            time.sleep(0.3)  # the backends write the log themselves
            with open(log, encoding="utf-8", errors="replace") as f:
                f.seek(phase)
                before = f.read(start - phase)
                window = f.read()
            entries = _entries(before + window)
            agent = {pid for pid, _, text in entries if "hatidata_agent" in text}
            counts[n] = sum(
                1
                for pid, database, text in _entries(window)
                if database == db
                and pid not in agent
                and text.startswith(("LOG:  statement: ", "LOG:  execute "))
            )
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as c:
            c.execute("ALTER SYSTEM RESET log_statement")
            c.execute("ALTER SYSTEM RESET log_line_prefix")
            c.execute("SELECT pg_reload_conf()")
    return counts


def _entries(log: str) -> list[tuple[str, str, str]]:
    """(backend pid, database, message) of each entry of a log written with
    log_line_prefix '%p %d ' (a statement's further lines belong to its entry)."""
    entries: list[tuple[str, str, str]] = []
    for line in log.splitlines():
        head = line.split(" ", 2)
        if len(head) == 3 and head[0].isdigit() and head[2][:4] in ("LOG:", "STAT", "DETA", "ERRO"):
            entries.append((head[0], head[1], head[2]))
        elif entries:
            pid, database, text = entries[-1]
            entries[-1] = (pid, database, text + "\n" + line)
    return entries


def _env_and_flags(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """VAR=value words (the proxy's environment) apart from its `serve` flags."""
    env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
    return env, [w for w in words if w.split("=", 1)[0] not in env]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", type=float, default=1)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--queries", default="", help="comma-separated query numbers (all 22)")
    ap.add_argument("--codec", default=DEFAULT_COMPRESSION, help="the lake's Parquet codec")
    ap.add_argument("--data", default="", help="a DuckDB file dbgen already filled (kept)")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="NAME=[VAR=value ...] FLAGS: one more lake proxy",
    )
    ap.add_argument(
        "--layout",
        action="append",
        default=[],
        help="NAME=OPTION=VALUE[,OPTION=VALUE]: one more lake (a catalog database and data "
        "path of its own) written with these DuckLake options, and a proxy on it",
    )
    ap.add_argument(
        "--catalog-log", action="store_true", help="count the catalog statements per query"
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
        # name -> (DuckLake options to write it with, the proxy's environment, its flags)
        layouts = {"lake": ({}, {}, [])}
        for spec in a.layout:
            name, _, rest = spec.partition("=")
            first, *words = shlex.split(rest)
            options = dict(o.split("=", 1) for o in first.split(",") if o)
            layouts[name] = (options, *_env_and_flags(words))
        for name, (options, _, _) in layouts.items():
            with psycopg.connect(pg.dsn, autocommit=True) as c:
                c.execute(f"CREATE DATABASE {name}")
            print(f"lake {name} {options or '(hatiproxy defaults)'}", flush=True)
            catalog = f"postgres:{pg.dsn} dbname={name}"
            copy_to_lake(local, catalog, tmp / name / "lake", a.codec, options)
        proc, file_port = start_hatiproxy(tmp / "file", database=str(local))
        procs.append(proc)
        names: list[str] = []
        dbs: list[str] = []  # each proxy's catalog database
        setups: list[tuple[dict[str, str], list[str]]] = []
        for name, (_, env, flags) in layouts.items():
            catalog = f"postgres:{pg.dsn} dbname={name}"
            lake_args = ["--lake-catalog", catalog, "--lake-data", str(tmp / name / "lake")]
            names.append(name)
            dbs.append(name)
            setups.append((env, [*lake_args, *flags]))
        for v in a.variant:
            name, _, words = v.partition("=")
            env, flags = _env_and_flags(shlex.split(words))
            names.append(name)
            dbs.append("lake")
            setups.append((env, [*setups[0][1], *flags]))
        ports = [file_port]
        for name, (env, flags) in zip(names, setups, strict=True):
            proc, port = start_hatiproxy(tmp / name, *flags, database=None, env=env)
            procs.append(proc)
            ports.append(port)
        dsn = "host=127.0.0.1 port={} user=bench dbname=hatidata"
        wanted = [int(n) for n in a.queries.split(",") if n] or list(range(1, 23))
        # per query and proxy: best wall-clock, and the proxy's and the catalog's CPU then
        best = {n: [(float("inf"), 0.0, 0.0)] * len(ports) for n in wanted}
        load_before = os.getloadavg()[0]
        conns = [psycopg.connect(dsn.format(p), autocommit=True) for p in ports]
        try:
            for _ in range(a.reps):
                for n in wanted:
                    for i, conn in enumerate(conns):
                        pg_pids = cluster_pids(pg.data)
                        c0 = cpu_s(pg_pids)
                        wall, cpu = timed(conn, queries[n - 1], [procs[i].pid])
                        if wall < best[n][i][0]:
                            best[n][i] = (wall, cpu, cpu_s(pg_pids) - c0)
            load_after = os.getloadavg()[0]
            counts = [
                catalog_statements(
                    pg.dsn, Path(pg.base) / "log", conn, db, {n: queries[n - 1] for n in wanted}
                )
                for conn, db in zip(conns[1:], dbs, strict=True)
            ] if a.catalog_log else []  # fmt: skip
        finally:
            for conn in conns:
                conn.close()
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
    print("  wall: seconds and x file; cpu: the proxy's CPU s (+ the catalog cluster's)")
    head = "".join(f" {name + ' s':>10} {'x':>5} {'cpu+pg':>11}" for name in names)
    print(f"  {'query':>5} {'file s':>8} {'cpu':>5}{head}")
    for n, times in best.items():
        cols = "".join(
            f" {w:10.3f} {w / times[0][0]:5.2f} {c:5.2f}+{p:5.2f}" for w, c, p in times[1:]
        )
        print(f"  {'Q' + str(n):>5} {times[0][0]:8.3f} {times[0][1]:5.2f}{cols}")
    totals = [
        tuple(sum(v[i][k] for v in best.values()) for k in range(3)) for i in range(len(ports))
    ]
    file_wall, file_cpu, _ = totals[0]
    cols = "".join(f" {w:10.3f} {w / file_wall:5.2f} {c:5.2f}+{p:5.2f}" for w, c, p in totals[1:])
    print(f"  {'total':>5} {file_wall:8.3f} {file_cpu:5.2f}{cols}   (target wall <= 1.5)")
    for i, name in enumerate(names, 1):
        wall, cpu, pgc = totals[i]
        worst = max(best, key=lambda n: best[n][i][0] / best[n][0][0])
        print(
            f"  {name}: wall x{wall / file_wall:.2f}; CPU proxy x{cpu / file_cpu:.2f}, proxy + "
            f"catalog x{(cpu + pgc) / file_cpu:.2f}; worst query Q{worst}: "
            f"x{best[worst][i][0] / best[worst][0][0]:.2f}"
        )
    for name, count in zip(names, counts, strict=False):
        print(
            f"  {name}: catalog statements per query: "
            + ", ".join(f"Q{n} {c}" for n, c in count.items())
        )


if __name__ == "__main__":
    main()
