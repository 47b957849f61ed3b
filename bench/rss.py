"""Server memory under a steady mixed workload: is RSS flat once the workload is steady?

    python bench/rss.py [--minutes 10] [--clients 4] [--provider onnx|hash] [--sample 5]
                        [--probe FILE]

A real `hatiproxy serve` subprocess (own fresh data directory, one admin API key, rate
limit off) runs, for `--minutes`, `--clients` wire clients (psycopg) and one REST
client, each in a loop of:
- SQL reads and writes: INSERT a row, point SELECT, an aggregate, UPDATE, DELETE of the
  row inserted (the table stays the same size); half the statements carry literals
  that differ every time (new SQL text for the transpile cache), half are $n prepared;
- store_memory + search_memory + delete_memory over SQL (the memories stay as many);
- REST: POST a memory, search, DELETE it.
So the stored data is held steady: every row and memory inserted is deleted again.

The server's RSS (/proc/<pid>/status VmRSS) is sampled every `--sample` seconds and
printed each minute; at the end: RSS at minute 1, at minute 5 (or the middle of a
shorter run) and at the end, the growth from minute 5 to the end in %, and the
operations done. The issue's target: under 10 % between minute 5 and minute 30.
`--probe FILE` (debug) has the server itself append, every 30 s, where its memory is
(glibc malloc, DuckDB's jemalloc, duckdb_memory() per database, threads): bench/rss_probe.

`--heaptrack FILE` (debug; needs `heaptrack`, Debian's package) runs the server under
heaptrack, which records every malloc and free with its backtrace (the server runs ~5-8x
slower) into FILE.zst, and at each `--snapshot MINUTE` keeps what was recorded so far as
FILE.m<MINUTE> (uncompressed). What the heap gained between two snapshots, by call site:
`heaptrack_print -f FILE.m15 -d FILE.m5 -l 1 -p 0 -a 0 -T 0` ("leaked" = still allocated
at the later snapshot; Python frames show as the interpreter's C functions).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import start_server  # noqa: E402
from tests.rest.rest_support import KeySpec, create_keys  # noqa: E402

BASE = "/v1/organizations/local/agent-memory"


def server_pid(data_dir: Path) -> int:
    """The pid of the `serve` process using data_dir (under heaptrack, a child of its
    script rather than the process start_server returns)."""
    for _ in range(100):
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[1:3] == [b"-m", b"proxy"] and str(data_dir).encode() in argv:
                return int(proc.name)
        time.sleep(0.1)
    raise RuntimeError(f"no server process for {data_dir}")


def heaptrack_snapshot(out: str, minute: float) -> None:
    """What heaptrack has written so far, decompressed (the stream is still open, so cut
    at its last whole line) into <out>.m<minute>."""
    dest = Path(f"{out}.m{minute:g}")
    with open(dest, "wb") as fh:
        subprocess.run(["zstd", "-dc", f"{out}.zst"], stdout=fh, stderr=subprocess.DEVNULL)
    with open(dest, "rb+") as fh:
        end = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, end - 65536))
        tail = fh.read()
        fh.truncate(max(0, end - 65536) + tail.rfind(b"\n") + 1)
    print(f"heaptrack snapshot {dest}", flush=True)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ops: dict[str, int] = {}
        self.errors: list[str] = []

    def add(self, kind: str, n: int = 1) -> None:
        with self.lock:
            self.ops[kind] = self.ops.get(kind, 0) + n

    def error(self, text: str) -> None:
        with self.lock:
            if len(self.errors) < 20:
                self.errors.append(text)


def sql_client(dsn: str, secret: str, n: int, stop: threading.Event, count: Counter) -> None:
    with psycopg.connect(dsn, password=secret, autocommit=True) as con:
        i = 0
        while not stop.is_set():
            i += 1
            key = (n + 1) * 10_000_000 + i
            try:
                if i % 2:  # literal text: a new statement text every time
                    con.execute(f"INSERT INTO items VALUES ({key}, 'item {key}', {i % 100})")
                    con.execute(f"SELECT name FROM items WHERE id = {key}").fetchall()
                    con.execute(f"UPDATE items SET qty = qty + 1 WHERE id = {key}")
                    con.execute(f"DELETE FROM items WHERE id = {key}")
                else:
                    con.execute("INSERT INTO items VALUES (%s, %s, %s)", (key, f"item {key}", 1))
                    con.execute("SELECT name FROM items WHERE id = %s", (key,)).fetchall()
                    con.execute("UPDATE items SET qty = qty + 1 WHERE id = %s", (key,))
                    con.execute("DELETE FROM items WHERE id = %s", (key,))
                con.execute("SELECT count(*), sum(qty) FROM items WHERE qty > %s", (i % 50,))
                count.add("sql", 5)
                if i % 4 == 0:
                    mid = con.execute(
                        "SELECT memory_id FROM store_memory(%s)",
                        (f"client {n} notes item {i}: the team discussed topic {i % 40}",),
                    ).fetchone()[0]
                    con.execute(
                        "SELECT memory_id FROM search_memory(%s, top_k := 5)",
                        (f"what about topic {i % 40}",),
                    ).fetchall()
                    con.execute("SELECT * FROM delete_memory(%s)", (str(mid),)).fetchall()
                    count.add("memory", 3)
            except Exception as exc:  # keep going; report at the end
                count.error(f"sql {type(exc).__name__}: {exc}"[:200])


def rest_client(url: str, secret: str, stop: threading.Event, count: Counter) -> None:
    s = requests.Session()
    s.headers["Authorization"] = f"ApiKey {secret}"
    i = 0
    while not stop.is_set():
        i += 1
        try:
            r = s.post(
                url + BASE,
                json={"agent_id": "rest-agent", "memory_type": "fact", "content": f"rest {i}"},
                timeout=30,
            )
            r.raise_for_status()
            s.get(
                url + BASE + "/search",
                params={"agent_id": "rest-agent", "query": f"rest {i}"},
                timeout=30,
            ).raise_for_status()
            s.delete(url + BASE + "/" + r.json()["id"], timeout=30).raise_for_status()
            count.add("rest", 3)
        except Exception as exc:
            count.error(f"rest {type(exc).__name__}: {exc}"[:200])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--provider", default="onnx", help="embedding provider (hash: no model)")
    ap.add_argument("--sample", type=float, default=5, help="seconds between RSS samples")
    ap.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="server environment"
    )
    ap.add_argument("--mark", type=float, default=None, help="minute growth is measured from")
    ap.add_argument(
        "--probe",
        metavar="FILE",
        help="debug: the server appends where its memory is to FILE every 30 s (bench/rss_probe)",
    )
    ap.add_argument(
        "--heaptrack",
        metavar="FILE",
        help="debug: run the server under heaptrack, recording into FILE.zst (see above)",
    )
    ap.add_argument(
        "--snapshot",
        type=float,
        action="append",
        default=[],
        metavar="MINUTE",
        help="with --heaptrack: keep what was recorded by this minute as FILE.m<MINUTE>",
    )
    a = ap.parse_args()
    extra_env = dict(e.split("=", 1) for e in a.env)
    wrap: list[str] = []
    if a.heaptrack:
        if not shutil.which("heaptrack"):
            ap.error("--heaptrack: heaptrack is not installed (apt-get install heaptrack)")
        wrap = ["heaptrack", "-o", a.heaptrack]
        # The tcache setting given here, so `serve` does not exec itself under heaptrack.
        extra_env.setdefault("GLIBC_TUNABLES", "glibc.malloc.tcache_count=64")
    if a.probe:
        extra_env["RSS_PROBE_OUT"] = str(Path(a.probe).resolve())
        paths = [str(ROOT / "bench" / "rss_probe"), os.environ.get("PYTHONPATH", "")]
        extra_env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    tmp = Path(tempfile.mkdtemp(prefix="hati-rss-"))
    secret = create_keys(tmp / "data", {"admin": KeySpec("admin")})["admin"]
    srv = start_server(
        tmp,
        "--embedding-provider",
        a.provider,
        "--rate-limit-per-minute",
        "0",
        env={"HATIDATA_MAX_CONNECTIONS": "1000", **extra_env},
        wrap=wrap,
    )
    pid = server_pid(tmp / "data") if a.heaptrack else srv.proc.pid
    snapshots = sorted(a.snapshot) if a.heaptrack else []
    try:
        with psycopg.connect(srv.dsn, password=secret, autocommit=True) as con:
            con.execute("CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT, qty INT)")
            con.execute("INSERT INTO items SELECT i, 'seed ' || i, i % 100 FROM range(1000) t(i)")
        stop = threading.Event()
        count = Counter()
        threads = [
            threading.Thread(target=sql_client, args=(srv.dsn, secret, n, stop, count), daemon=True)
            for n in range(a.clients)
        ]
        threads.append(
            threading.Thread(
                target=rest_client, args=(srv.rest_url, secret, stop, count), daemon=True
            )
        )
        t0 = time.monotonic()
        for t in threads:
            t.start()
        samples: list[tuple[float, int]] = [(0.0, rss_kib(pid))]
        ops_at: list[tuple[float, int]] = [(0.0, 0)]  # (seconds, operations done)
        print(f"server pid {pid}, RSS at start {samples[0][1] / 1024:.0f} MiB", flush=True)
        end = a.minutes * 60
        next_print = 60.0
        while (el := time.monotonic() - t0) < end:
            time.sleep(min(a.sample, max(0.1, end - el)))
            el = time.monotonic() - t0
            samples.append((el, rss_kib(pid)))
            ops_at.append((el, sum(count.ops.values())))
            if snapshots and el >= snapshots[0] * 60:
                heaptrack_snapshot(a.heaptrack, snapshots.pop(0))
                print(f"  operations so far {sum(count.ops.values())}", flush=True)
            if el >= next_print:
                print(
                    f"minute {el / 60:5.1f}: RSS {samples[-1][1] / 1024:7.1f} MiB  ops {count.ops}",
                    flush=True,
                )
                next_print += 60
        stop.set()
        for t in threads:
            t.join(timeout=60)

        def at(sec: float) -> int:
            return min(samples, key=lambda s: abs(s[0] - sec))[1]

        mark = a.mark * 60 if a.mark is not None else 300.0 if end >= 600 else end / 2
        first, mid, last = at(60), at(mark), samples[-1][1]
        ops_mid = min(ops_at, key=lambda s: abs(s[0] - mark))[1]
        ops_done = ops_at[-1][1] - ops_mid
        growth = (last - mid) / mid * 100
        print(
            f"RSS minute 1 {first / 1024:.1f} MiB, minute {mark / 60:.1f} {mid / 1024:.1f} MiB,"
            f" end ({samples[-1][0] / 60:.1f} min) {last / 1024:.1f} MiB;"
            f" growth minute {mark / 60:.1f} -> end {growth:+.1f} %"
            f" (target < 10 %); from minute 1 {(last - first) / first * 100:+.1f} %"
        )
        if ops_done:
            print(
                f"growth per 100k operations after minute {mark / 60:.1f}:"
                f" {(last - mid) / 1024 / ops_done * 1e5:.1f} MiB ({ops_done} operations)"
            )
        print(f"operations {count.ops}; errors {len(count.errors)}")
        for e in count.errors[:5]:
            print("  ", e)
    finally:
        if a.heaptrack:  # the server, not only heaptrack's script, and let it finish writing
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            srv.proc.wait(60)
        srv.stop()


if __name__ == "__main__":
    main()
