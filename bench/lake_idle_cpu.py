"""CPU an idle proxy of a DuckLake spends polling the agent lake: N proxies of a base
revision and N of this tree over one PostgreSQL 15 catalog, started together and left
idle; CPU ticks (/proc/<pid>/stat utime + stime, the process and its children) over the
same window, per proxy, as % of one core.

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/lake_idle_cpu.py [--base REV] [--n 3] [--secs 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import tests.conftest as tc
from tests.differential.pgcluster import start_pg

HZ = os.sysconf("SC_CLK_TCK")


def _ticks(pid: int) -> int:
    """utime + stime of pid and its living descendants."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(f[11]) + int(f[12])  # utime, stime
        todo += kids.get(p, [])
    return total


def _checkout(repo: Path, rev: str) -> Path:
    out = Path(tempfile.mkdtemp(prefix=f"bench-idle-{rev[:12]}-"))
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="HEAD", help="git revision of the baseline proxies")
    ap.add_argument("--this", default="", help="git revision of the others (default: this tree)")
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--secs", type=float, default=60.0)
    args = ap.parse_args()
    here = Path(__file__).resolve().parent.parent
    base = _checkout(here, args.base)
    if args.this:
        here = _checkout(here, args.this)
    pg = start_pg()
    data = Path(tempfile.mkdtemp(prefix="bench-idle-lake-"))
    lake = ("--lake-catalog", f"postgres:{pg.dsn}", "--lake-data", str(data))
    flags = ("--embedding-provider", "hash", "--auth-method", "trust", "--mcp-port", "0", *lake)
    procs: dict[str, list[tc.ServerProcess]] = {"base": [], "this": []}
    try:
        for _ in range(args.n):  # one at a time: a loaded machine starts them slowly
            for which, root in (("base", base), ("this", here)):
                tc.ROOT = root  # the server's cwd, first on its sys.path (PYTHONPATH=.)
                tmp = Path(tempfile.mkdtemp(prefix=f"bench-idle-{which}-"))
                procs[which].append(tc.start_server(tmp, *flags, timeout=300))
        time.sleep(10)  # start-up catch-ups and first checkpoints settle
        before = {w: [_ticks(p.proc.pid) for p in ps] for w, ps in procs.items()}
        t0 = time.monotonic()
        time.sleep(args.secs)
        secs = time.monotonic() - t0
        after = {w: [_ticks(p.proc.pid) for p in ps] for w, ps in procs.items()}
        load = os.getloadavg()
        out = {}
        for w in procs:
            pct = [100 * (a - b) / HZ / secs for a, b in zip(after[w], before[w], strict=True)]
            out[w] = statistics.mean(pct)
            print(f"{w:5s} ({args.base if w == 'base' else args.this or 'tree'}): idle CPU per proxy "
                  f"{', '.join(f'{x:.2f}' for x in pct)} % of a core (mean {out[w]:.2f} %)")  # fmt: skip
        print(f"this/base: {out['this'] / out['base']:.2f}x over {secs:.0f} s, load {load}")
    finally:
        for ps in procs.values():
            for p in ps:
                p.stop()
        pg.stop()


if __name__ == "__main__":
    main()
