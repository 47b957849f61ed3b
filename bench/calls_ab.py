"""Python calls per statement, this tree vs a baseline commit, counted by cProfile.

    python bench/calls_ab.py [--base a5bd59d] [--n 300] [--top 40] [--kind point]

Wall-clock A/Bs (bench/isolation_ab.py) move with the load of a shared machine and
callgrind (bench/instr_ab.py) takes many minutes to start a server; call counts neither.
Each server (this tree, and `--base` exported with `git archive` into a temp dir, run with
this venv) runs under a cProfile per thread (every thread started after start-up, and the
main loop's). After the same data and a warm-up, the profilers' counts are read before
and after `--n` statements of a kind on one psycopg connection (extended protocol, as
isolation_ab sends them) and subtracted. Prints per kind the calls (Python functions and
builtins) per statement and new/old, then the functions whose calls per statement differ
most, with their own time per statement (cProfile's, so inflated: compare, not quote).
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import isolation_ab  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KINDS: dict[str, tuple[str, int]] = {
    # kind: (statement, bound parameters)
    "point": ("SELECT v FROM pt WHERE id = %s", 1),
    "plain_count": ("SELECT count(*) FROM mem_copy", 0),
    "search": ("SELECT memory_id FROM search_memory(%s, 10)", -1),
    # writers of a serial table (proxy/pgserver/sequence_values.py reads what they drew)
    "serial_insert": ("INSERT INTO bench_serial (v, w) VALUES (%s, 'x')", 1),
    "serial_insert_select": ("INSERT INTO bench_serial (v, w) SELECT %s, 'x'", 1),
    "serial_returning": ("INSERT INTO bench_serial (v, w) VALUES (%s, 'x') RETURNING id", 1),
    # a single-row upsert (transpiler/upsert_guard.py leaves it as written)
    "upsert_one": (
        "INSERT INTO bench_serial (v, w) VALUES (%s, 'x') ON CONFLICT (id) DO NOTHING",
        1,
    ),
}
Stats = dict[str, tuple[int, float]]  # function -> (calls, own seconds)


# --- in the server process -------------------------------------------------------------


def _serve(argv: list[str]) -> None:
    """Run `python -m proxy ...` (argv after `-m proxy`) with every thread profiled;
    SIGUSR2 writes the counts so far to $CALLS_AB_OUT.<n>."""
    import cProfile
    import runpy
    import threading

    here = str(Path(__file__).resolve().parent)
    sys.path[:] = [p for p in sys.path if p != here]  # bench/'s modules shadow nothing
    profilers: list[cProfile.Profile] = []
    lock = threading.Lock()
    run = threading.Thread.run

    def profiled_run(self: threading.Thread) -> None:
        prof = cProfile.Profile()
        with lock:
            profilers.append(prof)
        prof.enable()
        try:
            run(self)
        finally:
            prof.disable()

    threading.Thread.run = profiled_run  # type: ignore[method-assign]
    out = os.environ["CALLS_AB_OUT"]
    dumps = [0]

    def dump(signum: int, frame: object) -> None:
        main.disable()  # on this (the main) thread: the dump's own calls are not counted
        try:
            write_dump()
        finally:
            main.enable()

    def write_dump() -> None:
        totals: dict[str, list[float]] = {}
        with lock:
            every = list(profilers)
        for prof in every:
            for entry in prof.getstats():
                code = entry.code
                key = code if isinstance(code, str) else f"{code.co_filename}:{code.co_name}"
                t = totals.setdefault(key, [0, 0.0])
                t[0] += entry.callcount
                t[1] += entry.inlinetime
                for sub in entry.calls or ():  # builtins by caller: "caller -> builtin"
                    if isinstance(sub.code, str):
                        t = totals.setdefault(f"{key} -> {sub.code}", [0, 0.0])
                        t[0] += sub.callcount
        dumps[0] += 1
        path = f"{out}.{dumps[0]}"
        with open(path + ".tmp", "wb") as f:
            marshal.dump({k: (int(v[0]), v[1]) for k, v in totals.items()}, f)
        os.replace(path + ".tmp", path)

    signal.signal(signal.SIGUSR2, dump)
    main = cProfile.Profile()
    profilers.append(main)
    sys.argv = ["proxy", *argv]
    main.enable()
    runpy.run_module("proxy", run_name="__main__", alter_sys=True)


# --- the driver --------------------------------------------------------------------------


def short(key: str, trees: tuple[Path, ...]) -> str:
    for tree in trees:
        key = key.replace(f"{tree}/", "")
    return key.replace(f"{sys.prefix}/lib/python3.11/", "").replace("site-packages/", "")


def one(con: psycopg.Connection, kind: str, i: int, rng: random.Random) -> None:
    """Statement `i` of `kind` (its parameters from i, or a fresh search text)."""
    sql, nparams = KINDS[kind]
    if nparams < 0:
        params: list = [isolation_ab.text(rng, 5)]
    else:
        params = [(i * 37) % 10000] * nparams
    cur = con.execute(sql, params)
    if cur.description is not None:
        cur.fetchall()


def measure(tree: Path, tmp: Path, kinds: list[str], n: int) -> dict[str, Stats]:
    out = tmp / "stats"
    os.environ["CALLS_AB_OUT"] = str(out)
    prefix = (sys.executable, __file__, "--serve")
    srv = isolation_ab.Server(tree, tmp, prefix, start_s=300)
    dumps = [0]

    def snapshot() -> Stats:
        dumps[0] += 1
        path = Path(f"{out}.{dumps[0]}")
        os.kill(srv.proc.pid, signal.SIGUSR2)
        while not path.exists():
            time.sleep(0.02)
        with open(path, "rb") as f:
            return marshal.load(f)

    try:
        isolation_ab.load(srv, 200)
        rng = random.Random(7)
        got: dict[str, Stats] = {}
        with srv.connect() as con:
            for kind in kinds:
                for i in range(50):  # warm-up: caches, prepared statements
                    one(con, kind, i, rng)
                # Three runs, the median one kept: a background thread's one-off work (a
                # lazy import, a timer) falls in one run, not in all.
                runs: list[tuple[int, Stats]] = []
                for _ in range(3):
                    before = snapshot()
                    for i in range(n):
                        one(con, kind, i, rng)
                    after = snapshot()
                    diff = {
                        k: (c - before.get(k, (0, 0.0))[0], t - before.get(k, (0, 0.0))[1])
                        for k, (c, t) in after.items()
                        if c != before.get(k, (0, 0.0))[0] and "calls_ab.py" not in k
                    }
                    total = sum(c for k, (c, _) in diff.items() if " -> " not in k)
                    print(f"{tree.name} {kind}: {total / n:.1f} calls", file=sys.stderr)
                    runs.append((total, diff))
                got[kind] = sorted(runs, key=lambda r: r[0])[1][1]
        return got
    finally:
        srv.stop()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        # argv: --serve <python> -m proxy serve ...
        return _serve(sys.argv[5:] if sys.argv[3] == "-m" else sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="a5bd59d")
    ap.add_argument("--new", help="a revision for the new side (default: this tree)")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--kind", action="append", choices=list(KINDS))
    ap.add_argument("--save", type=Path, help="write both sides' counts here (JSON)")
    a = ap.parse_args()
    kinds = a.kind or ["point", "plain_count"]
    with tempfile.TemporaryDirectory(prefix="calls_ab_") as tmpdir:
        tmp = Path(tmpdir)
        old_tree = tmp / "old_tree"
        isolation_ab.export(a.base, old_tree)
        old = measure(old_tree, tmp / "old_run", kinds, a.n)
        new_tree = ROOT
        if a.new:
            new_tree = tmp / "new_tree"
            isolation_ab.export(a.new, new_tree)
        new = measure(new_tree, tmp / "new_run", kinds, a.n)
        trees = (old_tree, new_tree)
    if a.save:
        a.save.write_text(json.dumps({"n": a.n, "old": old, "new": new}))
    print(f"calls per statement (server, all threads), {a.n} statements per kind")
    print(f"{'kind':<14}{'old':>10}{'new':>10}{'new/old':>9}   profiled us old, new")
    for kind in kinds:
        o = sum(c for k, (c, _) in old[kind].items() if " -> " not in k) / a.n
        w = sum(c for k, (c, _) in new[kind].items() if " -> " not in k) / a.n
        ot = sum(t for _, t in old[kind].values()) / a.n * 1e6
        nt = sum(t for _, t in new[kind].values()) / a.n * 1e6
        print(f"{kind:<14}{o:>10.1f}{w:>10.1f}{w / o:>9.3f}   {ot:.0f}, {nt:.0f}")
    for kind in kinds:
        so = {short(k, trees): v for k, v in old[kind].items()}
        sn = {short(k, trees): v for k, v in new[kind].items()}
        keys = set(so) | set(sn)
        zero = (0, 0.0)
        delta = {k: abs(sn.get(k, zero)[0] - so.get(k, zero)[0]) for k in keys}

        print(f"\n{kind}: calls per statement that differ (old, new; own us per statement)")
        for k in sorted(keys, key=delta.__getitem__, reverse=True)[: a.top]:
            if not delta[k]:
                break
            oc, ot = so.get(k, zero)
            nc, nt = sn.get(k, zero)
            print(
                f"{oc / a.n:>7.2f} {nc / a.n:>7.2f}  {ot / a.n * 1e6:>7.1f} {nt / a.n * 1e6:>7.1f}  {k}"
            )


if __name__ == "__main__":
    main()
