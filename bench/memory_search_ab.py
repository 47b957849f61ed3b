"""search_memory latency, this tree against a baseline commit, in one run.

    python bench/memory_search_ab.py [--base 910b162] [--n 20000] [--queries 300] [--rounds 2]

Wall-clock p50s on a shared 2-core machine move with its load, so each tree runs in
its own process, the two alternating `--rounds` times, and each search is timed both
by the wall clock and by the CPU time of the whole process (all threads), which moves
far less with the load. Per tree: `--n` memories of one agent (conversation turns as
bench/sessions.py generates them: small talk, appointment talk, codes, rare names),
inserted straight into the tables and loaded into the index as at start, vectors from
the hash embedder (the model's call is the same in both trees and is left out: this
measures what search does around it); then `--queries` searches top-10, each with a
fresh text: a stored turn's words plus a word of its own, a third of them with a rare
name. The baseline tree is `git archive` of `--base` in a temp dir, run with this venv.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent


async def child(n: int, queries: int) -> dict:
    import numpy as np
    from memory import WHO, close_layer, load, open_layer
    from sessions import DOCTORS, filler

    rng = random.Random(3)
    texts = [
        f"{rng.choice(DOCTORS)}{i} said the crown can wait." if i % 50 == 0 else filler(rng)
        for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as d:
        engine, layer = await open_layer(Path(d), "hash")
        try:
            vecs = np.asarray(layer.semantic.embedder.embed_batch(texts, mode="passage"))
            await load(layer, vecs, texts, np.random.default_rng(5))
            wall, cpu = [], []
            for i in range(queries + 20):
                base = texts[rng.randrange(n)] if i % 3 else texts[50 * rng.randrange(n // 50)]
                q = f"{' '.join(base.split()[:4])} {rng.choice(['note', 'please', 'today'])} {i}"
                w0, c0 = time.perf_counter(), time.process_time()
                hits = await layer.call("search_memory", WHO, [q], top_k=10)
                w1, c1 = time.perf_counter(), time.process_time()
                assert len(hits) == 10
                if i >= 20:  # the first searches warm caches up
                    wall.append((w1 - w0) * 1000)
                    cpu.append((c1 - c0) * 1000)
        finally:
            await close_layer(engine, layer)
    return {"wall": statistics.median(wall), "cpu": statistics.median(cpu)}


def run_tree(tree: Path, n: int, queries: int) -> dict:
    code = (
        # The tree's own bench helpers (they put their tree first on the path), this file.
        f"import sys, asyncio, json\n"
        f"sys.path[:0] = [{str(tree)!r}, {str(tree / 'bench')!r}, {str(BENCH)!r}]\n"
        f"import memory_search_ab as m\n"
        f"print(json.dumps(asyncio.run(m.child({n}, {queries}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, timeout=1800
    )
    if out.returncode:
        raise SystemExit(f"{tree}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="910b162")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    import os

    with tempfile.TemporaryDirectory() as d:
        base = Path(d) / "base"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.base], cwd=ROOT, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        got: dict[str, list[dict]] = {"base": [], "this": []}
        for r in range(args.rounds):
            for name, tree in (("base", base), ("this", ROOT)):
                res = run_tree(tree, args.n, args.queries)
                got[name].append(res)
                print(f"round {r + 1} {name:4s}: search_memory top-10 p50 wall {res['wall']:.2f} "
                      f"ms, CPU {res['cpu']:.2f} ms (load average {os.getloadavg()[0]:.1f})",
                      flush=True)  # fmt: skip
    for key in ("wall", "cpu"):
        old = statistics.mean(x[key] for x in got["base"])
        new = statistics.mean(x[key] for x in got["this"])
        print(f"{key:4s} p50 (mean over rounds): base {args.base} {old:.2f} ms, this tree "
              f"{new:.2f} ms: {new / old:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
