"""Server CPU and context switches per statement, this tree vs a baseline, one run.

    python bench/cpu_ab.py [--base a5bd59d] [--n 500] [--rounds 6] [--kind point]

Wall time on a loaded machine moves with the load; the server process's own CPU time
(all threads, /proc/<pid>/stat) moves much less, and its threads' context switches
(/proc/<pid>/task/*/status: a hand-off between threads, a wake-up of a sleeping one) not
at all. Both servers (this tree, and `--base` exported by `git archive`) run at once with
the same data (bench/isolation_ab.py's); per round and kind, `--n` statements on one
psycopg connection to each, in turn (which goes first alternates by round). Prints per
kind the median over rounds of CPU us and context switches per statement, and new/old.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calls_ab  # noqa: E402
import isolation_ab  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def switches(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            for line in (task / "status").read_text().splitlines():
                if "ctxt_switches:" in line:
                    total += int(line.split()[1])
        except OSError:  # the thread ended meanwhile
            pass
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="a5bd59d")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--kind", action="append", choices=list(calls_ab.KINDS))
    a = ap.parse_args()
    kinds = a.kind or ["point", "plain_count"]
    res: dict[str, dict[str, list[tuple[float, float]]]] = {
        s: {k: [] for k in kinds} for s in ("old", "new")
    }
    with tempfile.TemporaryDirectory(prefix="cpu_ab_") as tmpdir:
        tmp = Path(tmpdir)
        isolation_ab.export(a.base, tmp / "old_tree")
        servers: dict[str, isolation_ab.Server] = {}
        try:
            servers["old"] = isolation_ab.Server(tmp / "old_tree", tmp / "old_run", start_s=300)
            servers["new"] = isolation_ab.Server(ROOT, tmp / "new_run", start_s=300)
            for srv in servers.values():
                isolation_ab.load(srv, 200)
            cons = {name: srv.connect() for name, srv in servers.items()}
            rng = random.Random(7)
            for r in range(a.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for kind in kinds:
                    for name in order:
                        con, pid = cons[name], servers[name].proc.pid
                        for i in range(20):  # warm (and, in round 1, prepared)
                            calls_ab.one(con, kind, i, rng)
                        c0, s0 = cpu_s(pid), switches(pid)
                        for i in range(a.n):
                            calls_ab.one(con, kind, i, rng)
                        c1, s1 = cpu_s(pid), switches(pid)
                        res[name][kind].append(((c1 - c0) / a.n * 1e6, (s1 - s0) / a.n))
                print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
            for con in cons.values():
                con.close()
        finally:
            for srv in servers.values():
                srv.stop()
    print(f"server per statement, median over {a.rounds} rounds of {a.n}")
    print(f"{'kind':<14}{'cpu us old':>11}{'new':>9}{'new/old':>9}{'ctxsw old':>11}{'new':>7}")
    for kind in kinds:
        oc = statistics.median(c for c, _ in res["old"][kind])
        nc = statistics.median(c for c, _ in res["new"][kind])
        osw = statistics.median(s for _, s in res["old"][kind])
        nsw = statistics.median(s for _, s in res["new"][kind])
        print(f"{kind:<14}{oc:>11.1f}{nc:>9.1f}{nc / oc:>9.2f}{osw:>11.2f}{nsw:>7.2f}")


if __name__ == "__main__":
    main()
