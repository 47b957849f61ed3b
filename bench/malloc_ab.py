"""glibc malloc settings, A/B on one tree: point-query cost of each setting in one run.

    python bench/malloc_ab.py [--rounds 5] [--n 300] [--chunk 25] [--variant NAME=ENV ...]

core/native_memory.py fixes glibc's mmap threshold (the heap-hole fix of docs/memory.md);
this compares that against other settings given through the environment (the server
leaves a setting named in the environment alone). One server per variant, all from this
tree, each with the same 10,000-row table; per round, `--n` prepared point SELECTs per
server in turns of `--chunk` that alternate between the servers. Prints per variant:
p50 (median over rounds), server CPU time per statement (all threads, from
/proc/<pid>/task/*/schedstat: far less moved by a busy machine than wall time), minor
page faults per statement, RSS at the end; and each against the first variant.

A variant is NAME=ENV1=V1,ENV2=V2 (`--variant dyn=GLIBC_TUNABLES=...`); the defaults:
`current` (the server's own settings), `dynamic` (glibc's defaults: the settings are named
in GLIBC_TUNABLES under names glibc ignores, so the server leaves them alone) and the
candidates below.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import isolation_ab  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IGNORED = "glibc.malloc.mmap_threshold_unset=0:glibc.malloc.arena_max_unset=0"
DEFAULT_VARIANTS = {
    "current": {},
    "dynamic": {"GLIBC_TUNABLES": IGNORED},
    "trim4m": {"MALLOC_TRIM_THRESHOLD_": str(4 << 20)},
    "trim4m_pad1m": {"MALLOC_TRIM_THRESHOLD_": str(4 << 20), "MALLOC_TOP_PAD_": str(1 << 20)},
}


def cpu_ns(pid: int) -> int:
    """CPU time of the process's live threads, in ns."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError):  # the thread ended
            total += int((task / "schedstat").read_text().split()[0])
    return total


def minflt(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def start(name: str, env: dict[str, str], tmp: Path) -> isolation_ab.Server:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        return isolation_ab.Server(ROOT, tmp / name)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def parse_variants(given: list[str]) -> dict[str, dict[str, str]]:
    if not given:
        return DEFAULT_VARIANTS
    out: dict[str, dict[str, str]] = {}
    for spec in given:
        name, _, rest = spec.partition("=")
        out[name] = dict(kv.split("=", 1) for kv in rest.split(",") if kv)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--chunk", type=int, default=25)
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=ENV=V,...")
    a = ap.parse_args()
    variants = parse_variants(a.variant)
    names = list(variants)
    sql = "SELECT v FROM pt WHERE id = %s"
    with tempfile.TemporaryDirectory(prefix="malloc_ab_") as tmpdir:
        servers = {n: start(n, variants[n], Path(tmpdir)) for n in names}
        try:
            cons = {n: s.connect() for n, s in servers.items()}
            for con in cons.values():
                con.execute("CREATE TABLE pt (id INTEGER PRIMARY KEY, v VARCHAR)")
                con.execute("INSERT INTO pt SELECT i, 'v' || i FROM range(10000) t(i)")
                for i in range(300):  # warm-up: prepared statement, caches, heaps
                    con.execute(sql, [i]).fetchall()
            p50s: dict[str, list[float]] = {n: [] for n in names}
            cpu: dict[str, int] = dict.fromkeys(names, 0)
            flt: dict[str, int] = dict.fromkeys(names, 0)
            key = 0
            for r in range(a.rounds):
                times: dict[str, list[float]] = {n: [] for n in names}
                order = names[r % len(names) :] + names[: r % len(names)]
                for _ in range(0, a.n, a.chunk):
                    for n in order:
                        pid, con = servers[n].proc.pid, cons[n]
                        c0, f0 = cpu_ns(pid), minflt(pid)
                        for _ in range(a.chunk):
                            key = (key + 7919) % 10000
                            t0 = time.perf_counter()
                            con.execute(sql, [key]).fetchall()
                            times[n].append(time.perf_counter() - t0)
                        cpu[n] += cpu_ns(pid) - c0
                        flt[n] += minflt(pid) - f0
                for n in names:
                    p50s[n].append(statistics.median(times[n]) * 1e3)
                print(f"round {r + 1}/{a.rounds} done", flush=True)
            total = a.rounds * (a.n // a.chunk) * a.chunk
            rss = {n: rss_kib(s.proc.pid) for n, s in servers.items()}
            for con in cons.values():
                con.close()
        finally:
            for s in servers.values():
                s.stop()
    base = names[0]
    p50 = {n: statistics.median(p50s[n]) for n in names}
    cpu_us = {n: cpu[n] / total / 1e3 for n in names}
    print(f"\n{a.rounds} rounds x {a.n} point SELECTs per variant; ratios against {base}")
    print(
        f"{'variant':<16}{'p50 ms':>9}{'ratio':>7}{'cpu us':>9}{'ratio':>7}{'flt/st':>8}{'RSS MiB':>9}"
    )
    for n in names:
        print(
            f"{n:<16}{p50[n]:>9.3f}{p50[n] / p50[base]:>7.2f}{cpu_us[n]:>9.1f}"
            f"{cpu_us[n] / cpu_us[base]:>7.2f}{flt[n] / total:>8.2f}{rss[n] / 1024:>9.1f}"
        )


if __name__ == "__main__":
    main()
