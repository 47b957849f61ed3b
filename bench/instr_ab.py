"""Instructions per statement, this tree vs a baseline commit, counted by callgrind.

    python bench/instr_ab.py [--base a5bd59d] [--n 200]

Wall-clock A/Bs (bench/isolation_ab.py, bench/point_ab.py) move with the load of a
shared 2-core machine; instruction counts do not. Each server (this tree, and `--base`
checked out with `git worktree add` into a temp dir, run with this venv) is started under
`valgrind --tool=callgrind` with instrumentation off, so start-up runs at near native
speed. After loading the same 10,000-row table and a warm-up, instrumentation is switched
on and, per kind, `--n` statements are sent on one psycopg connection; callgrind's
counters are dumped after each kind. Prints instructions per statement (server process,
all threads) per kind and new/old. Needs Debian's valgrind.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import isolation_ab  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KINDS: dict[str, tuple[str, bool]] = {
    # kind: (statement, bound parameter?)
    "point": ("SELECT id, v FROM pt WHERE id = %s", True),
    "point_simple": ("SELECT id, v FROM pt WHERE id = {}", False),
    "plain_count": ("SELECT count(*) FROM pt WHERE id >= %s", True),
    "range20": ("SELECT id, v FROM pt WHERE id BETWEEN %s AND %s + 20", True),
}


class Server(isolation_ab.Server):
    """A server under callgrind, instrumentation off until switched on."""

    def __init__(self, tree: Path, tmp: Path) -> None:
        self.out = tmp / "cg"
        tmp.mkdir(parents=True, exist_ok=True)
        prefix = ("valgrind", "--tool=callgrind", "--instr-atstart=no",
                  f"--callgrind-out-file={self.out}")  # fmt: skip
        super().__init__(tree, tmp, prefix, start_s=600)

    def control(self, *args: str) -> None:
        subprocess.run(
            ["callgrind_control", *args, str(self.proc.pid)],
            check=True,
            capture_output=True,
            timeout=300,
        )

    def dumps(self) -> list[int]:
        """Total instructions of each dump part, in dump order."""
        parts = sorted(
            self.out.parent.glob(self.out.name + ".*"), key=lambda p: int(p.name.rsplit(".", 1)[1])
        )
        totals = []
        for p in parts:
            m = re.search(r"^(?:summary|totals): (\d+)", p.read_text(errors="replace"), re.M)
            totals.append(int(m.group(1)) if m else 0)
        return totals

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_kind(con: psycopg.Connection, kind: str, n: int) -> None:
    sql, bound = KINDS[kind]
    for i in range(n):
        if bound:
            key = (i * 37) % 10000
            con.execute(sql, [key] * sql.count("%s")).fetchall()
        else:
            con.execute(sql.format((i * 37) % 10000)).fetchall()


def measure(tree: Path, tmp: Path, n: int) -> dict[str, float]:
    srv = Server(tree, tmp)
    try:
        with srv.connect() as con:
            con.execute("CREATE TABLE pt (id INTEGER PRIMARY KEY, v VARCHAR)")
            con.execute("INSERT INTO pt SELECT i, 'v' || i FROM range(10000) t(i)")
            for kind in KINDS:  # warm-up: caches, prepared statements, imports
                run_kind(con, kind, 20)
            srv.control("-i", "on")
            srv.control("-z")
            for kind in KINDS:
                run_kind(con, kind, n)
                srv.control("-d")
            srv.control("-i", "off")
        totals = srv.dumps()
        return {kind: totals[i] / n for i, kind in enumerate(KINDS)}
    finally:
        srv.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="a5bd59d")
    ap.add_argument("--n", type=int, default=200)
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind not found: apt-get install valgrind")
    tmp = Path(tempfile.mkdtemp(prefix="instr_ab_"))
    old_tree = tmp / "old_tree"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(old_tree), a.base],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    try:
        old = measure(old_tree, tmp / "old_run", a.n)
        new = measure(ROOT, tmp / "new_run", a.n)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT)
    print(f"instructions per statement (server, all threads), {a.n} statements per kind")
    print(f"{'kind':<14}{'old':>14}{'new':>14}{'new/old':>9}")
    for kind in KINDS:
        print(f"{kind:<14}{old[kind]:>14,.0f}{new[kind]:>14,.0f}{new[kind] / old[kind]:>9.3f}")


if __name__ == "__main__":
    main()
