"""Issue 21's isolation work, A/B: the tree before it (commit a5bd59d) against this one.

    python bench/isolation_ab.py [--rounds 5] [--n 200] [--memories 1000] [--base a5bd59d]
        [--chunk 25]

Both servers run in this one run (trust mode, hash embeddings, no MCP/REST): the old
tree is exported with `git archive` into a temp dir (nothing in the repository changes)
and started with this project's venv (compatible). Each server gets the same data: a 10,000-row table with a
primary key, 1,000 stored memories of the default agent and a plain copy of them. In
each round, per kind, `--n` statements on one psycopg connection to each server, in
turns of `--chunk` statements that alternate between the servers (which one goes first
alternates by round), so a shared machine's changing load weighs on both alike:

- point: SELECT by primary key;
- search: search_memory(<a fresh query text>, 10) over the 1,000 memories;
- rel_count: SELECT count(*) FROM _hatidata_agent_memory;
- rel_filter: a filtered select of the relation (importance >= 0.9, ~10% of rows);
- plain_count / plain_filter: the same over a plain table holding the same rows (the
  target for the relation: within 1.5x of it).

Prints per kind the median over rounds of each round's p50, old/new, and new/old.

`--aa`: the noise floor of this A/B on the machine as it is: both servers run the `--base`
tree (two exports of it), so new/old shows how far two identical servers differ: on the quiet machine (load 1-4,
2026-11-27) two runs gave point 1.03 and 1.01, count(*) 1.02 and 1.00, and 0.96-1.04
over all kinds. `--new-first` starts and loads the new server first (a start-order bias
would turn around; it did not: 1.06 for point in that run).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "river",
    "mountain",
    "cloud",
    "orange",
    "purple",
    "engine",
    "database",
    "vector",
    "kernel",
    "garden",
    "window",
    "silver",
    "planet",
    "ocean",
    "forest",
    "music",
    "paper",
    "rocket",
    "winter",
    "summer",
]
KINDS = ("point", "search", "rel_count", "rel_filter", "plain_count", "plain_filter")


def export(rev: str, dest: Path) -> None:
    """The tree of `rev` into `dest` (no git worktree: nothing in the repo changes)."""
    dest.mkdir(parents=True)
    blob = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True)
    with tarfile.open(fileobj=io.BytesIO(blob.stdout)) as tar:
        tar.extractall(dest, filter="data")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(
        self, tree: Path, tmp: Path, prefix: tuple[str, ...] = (), start_s: float = 90
    ) -> None:
        """`prefix`: a command the server runs under (e.g. valgrind)."""
        self.port = free_port()
        data = tmp / "data"
        data.mkdir(parents=True)
        cmd = [
            *prefix, sys.executable, "-m", "proxy", "serve", "--port", str(self.port),
            "--data-dir", str(data), "--embedding-provider", "hash",
            "--mcp-port", "0", "--rest-port", "0",
        ]  # fmt: skip
        self.log = tmp / "server.log"
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(tree)}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=tree, stdout=out, stderr=out, env=env)
        deadline = time.monotonic() + start_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server in {tree} exited:\n{self.log.read_text()[-3000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"server in {tree} did not start")

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="hatidata", autocommit=True
        )

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def text(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + f" {rng.randrange(10**9)}"


def load(server: Server, memories: int) -> None:
    rng = random.Random(21)
    with server.connect() as con:
        con.execute("CREATE TABLE pt (id INTEGER PRIMARY KEY, v VARCHAR)")
        con.execute("CREATE TABLE bench_serial (id serial PRIMARY KEY, v int, w text)")
        con.execute("INSERT INTO pt SELECT i, 'v' || i FROM range(10000) t(i)")
        for i in range(memories):
            con.execute(
                "SELECT memory_id FROM store_memory(%s, importance := %s, wait := %s)",
                [text(rng), round(rng.random(), 3), i == memories - 1],
            )
        con.execute("CREATE TABLE mem_copy AS SELECT * FROM _hatidata_agent_memory")
        n = con.execute("SELECT count(*) FROM _hatidata_agent_memory").fetchone()[0]
        assert n == memories, n


Make = Callable[[int], tuple[str, list]]


def timed(con: psycopg.Connection, n: int, make: Make) -> list[float]:
    times = []
    for i in range(n):
        sql, params = make(i)
        t0 = time.perf_counter()
        con.execute(sql, params).fetchall()
        times.append(time.perf_counter() - t0)
    return times


def statements(rng: random.Random) -> dict[str, Make]:
    filt = "SELECT memory_id, content FROM {} WHERE importance >= 0.9"
    return {
        "point": lambda i: ("SELECT v FROM pt WHERE id = %s", [rng.randrange(10000)]),
        "search": lambda i: ("SELECT memory_id FROM search_memory(%s, 10)", [text(rng, 5)]),
        "rel_count": lambda i: ("SELECT count(*) FROM _hatidata_agent_memory", []),
        "rel_filter": lambda i: (filt.format("_hatidata_agent_memory"), []),
        "plain_count": lambda i: ("SELECT count(*) FROM mem_copy", []),
        "plain_filter": lambda i: (filt.format("mem_copy"), []),
    }  # fmt: skip


def round_of(
    servers: dict[str, Server], n: int, rng: random.Random, order: tuple[str, str], chunk: int
) -> dict[str, dict[str, float]]:
    """Per kind, `n` statements on each server, in chunks of `chunk` that alternate
    between them: a shared machine's load then weighs on both alike."""
    cons = {name: servers[name].connect() for name in order}
    try:
        out: dict[str, dict[str, float]] = {name: {} for name in order}
        for kind, make in statements(rng).items():
            times: dict[str, list[float]] = {name: [] for name in order}
            for start in range(0, n, chunk):
                for name in order:
                    times[name] += timed(cons[name], min(chunk, n - start), make)
            for name in order:
                out[name][kind] = statistics.median(times[name]) * 1000
        return out
    finally:
        for con in cons.values():
            con.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--base", default="a5bd59d")
    ap.add_argument("--chunk", type=int, default=25, help="statements per turn of each server")
    ap.add_argument("--aa", action="store_true", help="both servers run --base (noise floor)")
    ap.add_argument("--new-first", action="store_true", help="start and load the new one first")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="isolation_ab_") as tmpdir:
        tmp = Path(tmpdir)
        old_tree = tmp / "old"
        export(args.base, old_tree)
        new_tree = ROOT
        if args.aa:
            new_tree = tmp / "old_again"
            export(args.base, new_tree)
        servers: dict[str, Server] = {}
        try:
            trees = {"old": old_tree, "new": new_tree}
            for name in ("new", "old") if args.new_first else ("old", "new"):
                servers[name] = Server(trees[name], tmp / f"{name}_run")
            for name, server in servers.items():
                t0 = time.perf_counter()
                load(server, args.memories)
                print(f"{name}: loaded in {time.perf_counter() - t0:.1f} s", flush=True)
            rng = random.Random(7)
            results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
            for r in range(args.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                got = round_of(servers, args.n, rng, order, args.chunk)
                for name in order:
                    results[name].append(got[name])
                print(f"round {r + 1}/{args.rounds} done", flush=True)
        finally:
            for server in servers.values():
                server.stop()
    what = f"A/A: both {args.base}" if args.aa else f"old {args.base}, new this tree"
    print(f"\np50 in ms, median over {args.rounds} rounds of {args.n} statements each ({what})")
    print(f"{'kind':<14}{'old':>10}{'new':>10}{'new/old':>10}")
    for kind in KINDS:
        old = statistics.median(r[kind] for r in results["old"])
        new = statistics.median(r[kind] for r in results["new"])
        print(f"{kind:<14}{old:>10.3f}{new:>10.3f}{new / old:>10.2f}")
    for side in ("old", "new"):
        for what in ("count", "filter"):
            rel = statistics.median(r[f"rel_{what}"] for r in results[side])
            plain = statistics.median(r[f"plain_{what}"] for r in results[side])
            print(f"{side}: relation/plain table ({what}): {rel / plain:.2f}")


if __name__ == "__main__":
    main()
