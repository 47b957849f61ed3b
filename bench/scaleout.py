"""Point-query and mixed-workload QPS: one proxy on a local file (the baseline) against
1, 2 and 4 proxy processes over one DuckLake (PostgreSQL 15 catalog, shared data path),
same run. Target (issue 25): 2 lake proxies give >= 1.6x one lake proxy's throughput.

Each configuration gets a lake of its own (a new catalog database and data path) with
the same data, so no configuration reads the files and snapshots an earlier one wrote.
Clients are processes (not threads: the client side must not be GIL-bound either),
spread round-robin over the proxies; each runs the workload unmeasured for --warmup
seconds, then loops for --seconds on either a prepared point SELECT ("point") or a mix
("mixed": 70% point SELECT, 20% one-row INSERT, 10% a 100-row range aggregate).

The proxies of one configuration share one scheduling session (the kernel's autogroup:
on a machine shared with other work each session gets a share of the CPU), so 4 proxies
get the same share of a loaded machine as 1, as PostgreSQL (its own session) does in
every configuration. Those sessions get the bench's own niceness (`nice -n 5 python
bench/scaleout.py`): with autogroup a process's nice only ranks it within its session,
so the sessions the bench starts are given the same value. The CPU time each side used in the measured window (clients,
proxies, PostgreSQL, from /proc and getrusage) is printed per statement: when the sum
reaches the cores the run had, no number of proxies can go faster on this machine.

    .venv/bin/python bench/scaleout.py [--clients 4] [--seconds 10] [--warmup 3]
        [--rows 10000] [--proxies 1,2,4] [--serve-args '--duckdb-threads 1'] [--perf]

--perf samples the proxies with Linux perf during each measured window and prints where
their CPU went by binary: Python (the interpreter: hatiproxy's own code), DuckDB's core,
the ducklake and postgres extensions (libpq is linked into the latter), libc and the
kernel (socket I/O, scheduling).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import resource
import shlex
import shutil
import signal
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
RANGE = "SELECT count(*), sum(id) FROM scale_kv WHERE id BETWEEN %s AND %s + 100"
INSERT = "INSERT INTO scale_log VALUES (%s, %s)"
TICK = os.sysconf("SC_CLK_TCK")


def _dsn(port: int) -> str:
    return f"host=127.0.0.1 port={port} user=bench dbname=hatidata"


class Proxies:
    """N hatiproxy processes started by one shell in a session of its own."""

    def __init__(self, tmp: Path, n: int, args: list[str], env: dict[str, str]) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        self.ports = [_free_port() for _ in range(n)]
        cmds = []
        for i, port in enumerate(self.ports):
            cmd = [sys.executable, "-m", "proxy", "serve", "--port", str(port),
                   "--mcp-port", "0", "--rest-port", "0", "--data-dir", str(tmp / f"data{i}"),
                   "--log-level", "WARNING", "--embedding-provider", "hash", *args]  # fmt: skip
            log = shlex.quote(str(tmp / f"hatiproxy{i}.log"))
            cmds.append(f"{shlex.join(cmd)} >{log} 2>&1 &")
        # started at once: proxies on a new catalog race to create the lake (lake.py)
        self.shell = subprocess.Popen(
            ["sh", "-c", " ".join(cmds) + " wait"],
            cwd=ROOT,
            start_new_session=True,
            env={**os.environ, **env},
        )
        self.logs = [tmp / f"hatiproxy{i}.log" for i in range(n)]
        deadline = time.monotonic() + 300  # a loaded shared machine
        for port, log in zip(self.ports, self.logs, strict=True):
            while True:
                if self.shell.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"hatiproxy did not start:\n{log.read_text()}")
                try:
                    psycopg.connect(_dsn(port)).close()
                    break
                except psycopg.OperationalError:
                    time.sleep(0.2)
        self.pids = _children(self.shell.pid)
        same_niceness(self.shell.pid)

    def cpu(self) -> float:
        return sum(_cpu(p) for p in self.pids)

    def switches(self) -> int:
        return sum(_switches(p) for p in self.pids)

    def stop(self) -> None:
        if self.shell.poll() is None:
            os.killpg(self.shell.pid, signal.SIGTERM)
            try:
                self.shell.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.shell.pid, signal.SIGKILL)


def same_niceness(pid: int) -> None:
    """The session of pid (its autogroup) gets this process's nice value."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(os.nice(0)))
    except OSError as exc:  # no autogroup, or not allowed (a negative value needs root)
        print(f"  (session niceness not set: {exc})", flush=True)


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d))
    return out


def _cpu(pid: int) -> float:
    """user + system seconds of a process (all its threads)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def _switches(pid: int) -> int:
    """Context switches of all threads of a process: each one a thread that went to sleep
    waiting (a round trip, a lock, a handoff to another thread) or was preempted."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tasks:
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except OSError:
            continue
        total += sum(
            int(line.split()[1]) for line in status.splitlines() if "ctxt_switches" in line
        )
    return total


def pg_pids(pg_data: str) -> list[int]:
    """The postmaster and its live children (backends that exited are not counted: the
    pools keep theirs for the run)."""
    master = int(Path(pg_data, "postmaster.pid").read_text().split()[0])
    return [master, *_children(master)]


def pg_cpu(pg_data: str) -> tuple[float, int]:
    """The PostgreSQL server's CPU seconds and context switches."""
    pids = pg_pids(pg_data)
    return sum(_cpu(p) for p in pids), sum(_switches(p) for p in pids)


def load(port: int, rows: int) -> None:
    with psycopg.connect(_dsn(port), autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS scale_kv")
        c.execute(f"CREATE TABLE scale_kv AS SELECT range::INTEGER AS id, 'v' || range AS v "
                  f"FROM range({rows})")  # fmt: skip
        c.execute("DROP TABLE IF EXISTS scale_log")
        c.execute("CREATE TABLE scale_log (client INTEGER, n INTEGER)")


def client(args: tuple[int, float, float, int, float, str, int]) -> tuple[float, float]:
    """(statements per second, CPU seconds of this client) over its measured window."""
    port, warmup, seconds, rows, start_at, workload, seed = args
    rnd = random.Random(seed)
    with psycopg.connect(_dsn(port), autocommit=True) as c:
        c.execute(POINT, (1,), prepare=True).fetchall()
        while time.time() < start_at:
            time.sleep(0.01)
        done = 0

        def run_until(end: float) -> None:
            nonlocal done
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

        run_until(start_at + warmup)  # plans cached, pools filled, caches warm
        done = 0
        ru = resource.getrusage(resource.RUSAGE_SELF)
        begun = time.time()
        run_until(begun + seconds)
        elapsed = time.time() - begun
        ru2 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = ru2.ru_utime + ru2.ru_stime - ru.ru_utime - ru.ru_stime
    return done / elapsed, cpu


def measure(
    proxies: Proxies, pg_data: str, a: argparse.Namespace, workload: str
) -> dict[str, float]:
    ports = proxies.ports
    start_at = time.time() + 5.0  # spawning clients takes seconds on a loaded machine
    jobs = [
        (ports[i % len(ports)], a.warmup, a.seconds, a.rows, start_at, workload, i)
        for i in range(a.clients)
    ]
    with multiprocessing.get_context("spawn").Pool(a.clients) as pool:
        pending = pool.map_async(client, jobs)
        # the server sides' CPU over the measured window (between warm-up and the end)
        time.sleep(max(0.0, start_at + a.warmup - time.time()))
        p0, s0, (g0, q0), t0 = proxies.cpu(), proxies.switches(), pg_cpu(pg_data), time.time()
        window = max(0.5, a.seconds - 0.5)
        perf = start_perf(proxies.pids, window) if a.perf else None
        # ends before the clients do: a connection's thread that exited takes its count
        # of context switches with it (its CPU time stays in the process's)
        time.sleep(window)
        p1, s1, (g1, q1), t1 = proxies.cpu(), proxies.switches(), pg_cpu(pg_data), time.time()
        out = pending.get()
    shares = perf_shares(*perf) if perf else {}
    qps = sum(q for q, _ in out)
    n = qps * (t1 - t0)
    return {
        "qps": qps,
        "client_ms": sum(c for _, c in out) / (qps * a.seconds) * 1000,
        "proxy_ms": (p1 - p0) / n * 1000,
        "pg_ms": (g1 - g0) / n * 1000,
        "proxy_sw": (s1 - s0) / n,
        "pg_sw": (q1 - q0) / n,
        "busy": (sum(c for _, c in out) + p1 - p0 + g1 - g0) / (t1 - t0),
        "load": os.getloadavg()[0],
        **{f"perf:{k}": v for k, v in shares.items()},
    }


PERF_GROUPS = (  # perf's DSO name -> the part of a proxy it is (first match wins)
    ("_duckdb.", "DuckDB"),  # the duckdb wheel's module: DuckDB itself
    ("ducklake", "ducklake ext"),
    ("postgres_scanner", "postgres ext"),
    ("python", "Python"),  # the interpreter and C modules (uvloop, _asyncio, ...)
    ("libc.", "libc"),
    ("kernel", "kernel"),
)


def start_perf(pids: list[int], seconds: float) -> tuple[subprocess.Popen, Path]:
    out = Path(tempfile.mkdtemp(prefix="hati-perf-")) / "perf.data"
    cmd = ["perf", "record", "-q", "-F", "499", "-o", str(out), "-p", ",".join(map(str, pids))]
    proc = subprocess.Popen([*cmd, "--", "sleep", f"{seconds:.1f}"], stderr=subprocess.DEVNULL)
    return proc, out


def perf_shares(proc: subprocess.Popen, out: Path) -> dict[str, float]:
    """Percent of the proxies' sampled CPU per part (PERF_GROUPS; the rest 'other')."""
    proc.wait(60)
    report = subprocess.run(
        ["perf", "report", "-i", str(out), "--sort", "dso", "--stdio", "-q"],
        capture_output=True,
        text=True,
    ).stdout
    shutil.rmtree(out.parent, ignore_errors=True)
    shares: dict[str, float] = {}
    for line in report.splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[0].endswith("%"):
            continue
        dso = " ".join(parts[1:]).lower()
        group = next((g for key, g in PERF_GROUPS if key in dso), "other")
        shares[group] = shares.get(group, 0.0) + float(parts[0].rstrip("%"))
    return shares


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=3)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--proxies", default="1,2,4", help="lake proxy counts to measure")
    ap.add_argument("--workloads", default="point,mixed")
    ap.add_argument("--serve-args", default="", help="extra `serve` flags for every proxy")
    ap.add_argument("--lake-serve-args", default="", help="extra `serve` flags, lake proxies")
    ap.add_argument(
        "--inline-rows", default="", help="DuckLake data inlining row limit (hatiproxy: 0)"
    )
    ap.add_argument("--socket", action="store_true", help="catalog over PG's unix socket")
    ap.add_argument("--perf", action="store_true", help="proxies' CPU by binary (Linux perf)")
    a = ap.parse_args()
    counts = [int(n) for n in a.proxies.split(",")]
    workloads = a.workloads.split(",")
    extra = shlex.split(a.serve_args)
    tmp = Path(tempfile.mkdtemp(prefix="hati-scaleout-"))
    pg = start_pg()
    same_niceness(pg_pids(pg.data)[0])
    results: dict[tuple[str, str], dict[str, float]] = {}
    configs = [("1 proxy, local file", 1, None)] + [
        (f"{n} prox{'y' if n == 1 else 'ies'}, DuckLake", n, f"lake{n}") for n in counts
    ]
    started = os.getloadavg()[0]
    try:
        for label, n, lake in configs:
            args, env = list(extra), {}
            if lake:
                with psycopg.connect(pg.dsn, autocommit=True) as c:
                    c.execute(f"CREATE DATABASE {lake}")
                host = f"host={pg.base}" if a.socket else "host=127.0.0.1"
                catalog = f"postgres:{host} port={pg.port} user=postgres dbname={lake}"
                args += ["--lake-catalog", catalog, "--lake-data", str(tmp / lake)]
                args += shlex.split(a.lake_serve_args)
                if a.inline_rows:
                    env["HATIDATA_LAKE_INLINE_ROWS"] = a.inline_rows
            proxies = Proxies(tmp / (lake or "file"), n, args, env)
            try:
                load(proxies.ports[0], a.rows)
                for w in workloads:
                    results[(label, w)] = m = measure(proxies, pg.data, a, w)
                    print(f"  {label:24s} {w:5s} {m['qps']:7.0f} QPS  load {m['load']:.1f}",
                          flush=True)  # fmt: skip
            finally:
                proxies.stop()
    finally:
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    report(a, results, counts, workloads, started)


def report(
    a: argparse.Namespace,
    results: dict[tuple[str, str], dict[str, float]],
    counts: list[int],
    workloads: list[str],
    started: float,
) -> None:
    loads = [started] + [m["load"] for m in results.values()]
    print(
        f"QPS, {a.clients} client processes, {a.warmup:g} s warm-up + {a.seconds:g} s each, "
        f"{a.rows} rows, serve {a.serve_args or '(defaults)'}"
        f"{' + ' + a.lake_serve_args if a.lake_serve_args else ''}"
        f"{f'; lake inlining {a.inline_rows} rows' if a.inline_rows else ''}; catalog over "
        f"{'unix socket' if a.socket else 'TCP'}; load average {min(loads):.1f}-"
        f"{max(loads):.1f} on {os.cpu_count()} cores"
    )
    for w in workloads:
        base = results[("1 proxy, local file", w)]["qps"]
        one = results.get(("1 proxy, DuckLake", w), {}).get("qps")
        print(f" {w}:{'':27s}    QPS  /file /1lake   CPU ms per statement: client proxy PG"
              "   cores busy   switches/statement: proxy PG")  # fmt: skip
        for (name, wl), m in results.items():
            if wl != w:
                continue
            vs_one = f"{m['qps'] / one:6.2f}" if one and "DuckLake" in name else "      "
            print(
                f"  {name:30s} {m['qps']:7.0f} {m['qps'] / base:5.2f} {vs_one}"
                f"   {m['client_ms']:23.2f} {m['proxy_ms']:5.2f} {m['pg_ms']:5.2f}"
                f"   {m['busy']:5.2f}   {m['proxy_sw']:28.1f} {m['pg_sw']:5.1f}"
            )
        for (name, wl), m in results.items():
            shares = {k[5:]: v for k, v in m.items() if k.startswith("perf:")}
            if wl == w and shares:
                top = sorted(shares.items(), key=lambda kv: -kv[1])
                print(f"    {name}: proxy CPU " + ", ".join(f"{k} {v:.0f}%" for k, v in top))
        two = results.get(("2 proxies, DuckLake", w), {}).get("qps")
        if one and two:
            print(f"  2 lake proxies / 1 lake proxy: x{two / one:.2f}   (target >= 1.6)")


if __name__ == "__main__":
    main()
