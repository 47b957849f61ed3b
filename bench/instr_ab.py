"""Instructions per statement, this tree vs a baseline commit, counted by callgrind.

    python bench/instr_ab.py [--base a5bd59d] [--new REV] [--n 200] [--kind point]
        [--keep DIR]

Wall-clock A/Bs (bench/isolation_ab.py, bench/point_ab.py) move with the load of a
shared 2-core machine; instruction counts do not. Each server (this tree or `--new`, and
`--base`, exported with `git archive` into a temp dir and run with this venv) is started
under `valgrind --tool=callgrind` with instrumentation off, so start-up runs at near
native speed. After the same data as bench/calls_ab.py (a 10,000-row table, 200 memories
and their plain copy) and a warm-up, instrumentation is switched on and, per kind, `--n`
statements (calls_ab's, extended protocol as isolation_ab sends them) go on one psycopg
connection; callgrind's counters are dumped after each kind. Prints instructions per
statement per kind (server process, all threads; and the connection's own thread) and
new/old. `--keep DIR` keeps the
dumps (DIR/<old|new>.<kind>.<thread>) for `callgrind_annotate`. Needs Debian's valgrind.

DuckDB runs with one thread (`--duckdb-threads 1`) unless told otherwise: with a worker
thread of its own, DuckDB may run a statement's pipeline there while the connection's
thread spins in CompletePendingQuery, and how long it spins depends on how valgrind
schedules the threads (two runs of the same trees: 0.74x and 1.33x on the point SELECT).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calls_ab  # noqa: E402
import isolation_ab  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Server(isolation_ab.Server):
    """A server under callgrind, instrumentation off until switched on."""

    def __init__(self, tree: Path, tmp: Path, cache_sim: bool = False) -> None:
        self.out = tmp / "cg"
        tmp.mkdir(parents=True, exist_ok=True)
        # One dump file per thread and dump (cg.<dump>-<thread>): the connection's own
        # thread (the busiest) is the statement's critical path; the others are DuckDB's
        # workers and the main loop's background rounds.
        prefix = ("valgrind", "--tool=callgrind", "--instr-atstart=no", "--trace-children=yes",
                  "--separate-threads=yes", f"--callgrind-out-file={self.out}",
                  *(("--cache-sim=yes",) if cache_sim else ()))  # fmt: skip
        super().__init__(tree, tmp, prefix, start_s=900)

    def control(self, *args: str) -> None:
        subprocess.run(
            ["callgrind_control", *args, str(self.proc.pid)],
            check=True,
            capture_output=True,
            timeout=300,
        )

    def parts(self) -> list[dict[str, Path]]:
        """Per dump, in dump order: its file per thread."""
        got: dict[int, dict[str, Path]] = {}
        for p in self.out.parent.glob(self.out.name + ".*"):
            dump, _, thread = p.name.rsplit(".", 1)[1].partition("-")
            got.setdefault(int(dump), {})[thread] = p
        return [got[k] for k in sorted(got)]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def total(dump: Path) -> int:
    m = re.search(r"^(?:summary|totals): (\d+)", dump.read_text(errors="replace"), re.M)
    return int(m.group(1)) if m else 0


def run_kind(con: psycopg.Connection, kind: str, n: int, rng: random.Random) -> None:
    for i in range(n):
        calls_ab.one(con, kind, i, rng)


def measure(
    tree: Path, tmp: Path, kinds: list[str], n: int, keep: Path | None, side: str, cache_sim: bool
) -> dict[str, tuple[float, float]]:
    srv = Server(tree, tmp, cache_sim)
    try:
        isolation_ab.load(srv, 200)
        rng = random.Random(7)
        with srv.connect() as con:
            for kind in kinds:  # warm-up: caches, prepared statements, imports
                run_kind(con, kind, 50, rng)
            srv.control("-i", "on")
            srv.control("-z")
            for kind in kinds:
                run_kind(con, kind, n, rng)
                srv.control("-d")
            srv.control("-i", "off")
        out = {}
        for kind, part in zip(kinds, srv.parts(), strict=True):
            totals = {thread: total(p) for thread, p in part.items()}
            busiest = max(totals, key=totals.__getitem__)
            out[kind] = (sum(totals.values()) / n, totals[busiest] / n)
            if keep:
                for thread, p in part.items():
                    shutil.copy(p, keep / f"{side}.{kind}.{thread}")
        return out
    finally:
        srv.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="a5bd59d")
    ap.add_argument("--new", help="a revision for the new side (default: this tree)")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--kind", action="append", choices=list(calls_ab.KINDS))
    ap.add_argument("--keep", type=Path, help="copy the callgrind dumps here")
    ap.add_argument("--cache-sim", action="store_true", help="also count cache misses (slower)")
    ap.add_argument(
        "--duckdb-threads", type=int, default=1, help="both servers' DuckDB threads (0: default)"
    )
    a = ap.parse_args()
    if a.duckdb_threads:
        os.environ["HATIDATA_DUCKDB_THREADS"] = str(a.duckdb_threads)
    if not shutil.which("valgrind"):
        sys.exit("valgrind not found: apt-get install valgrind")
    kinds = a.kind or ["point", "plain_count"]
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="instr_ab_") as tmpdir:
        tmp = Path(tmpdir)
        isolation_ab.export(a.base, tmp / "old_tree")
        new_tree = ROOT
        if a.new:
            new_tree = tmp / "new_tree"
            isolation_ab.export(a.new, new_tree)
        old = measure(tmp / "old_tree", tmp / "old_run", kinds, a.n, a.keep, "old", a.cache_sim)
        new = measure(new_tree, tmp / "new_run", kinds, a.n, a.keep, "new", a.cache_sim)
    print(f"instructions per statement, {a.n} statements per kind")
    print(f"{'kind':<14}{'thread':<12}{'old':>14}{'new':>14}{'new/old':>9}")
    for kind in kinds:
        for i, what in enumerate(("all", "connection")):
            o, w = old[kind][i], new[kind][i]
            print(f"{kind:<14}{what:<12}{o:>14,.0f}{w:>14,.0f}{w / o:>9.3f}")


if __name__ == "__main__":
    main()
