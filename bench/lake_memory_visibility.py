"""How long a memory stored through one proxy takes to be found by search_memory through
another (issue 25: every one within 1 s), over a real PostgreSQL 15 catalog with two
hatiproxy processes. Per memory, from the store's acknowledgement (`wait := true`: it is
embedded and searchable on A when the call returns, which the bench checks at once on
A's connection):

- stage A: acknowledged on A -> its row and vector committed to the agent lake (a thread
  watches the lake's latest snapshot id in the PostgreSQL catalog);
- stage B: that lake commit -> search_memory on B finds it (B's poll tick, change-feed
  read, index insert);
- total: acknowledged on A -> found on B.

Printed as p50 / p90 / max with the load average. `--new-proxy M` then stores M more
memories and times a third proxy's start on that lake (its first catch-up indexes all).

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/lake_memory_visibility.py [N] [--new-proxy M]
        [--stages]  (B's own stages from its debug log: tick read, change feed, apply)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
import threading
import time

import psycopg
from lake_cluster import LakeCluster

LIMIT = 10.0


class SnapshotWatch(threading.Thread):
    """The agent lake's latest snapshot id, read from the catalog in a tight loop: when
    each id was first seen (monotonic)."""

    def __init__(self, dsn: str) -> None:
        super().__init__(daemon=True)
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.seen: list[tuple[float, int]] = []
        self.stop = threading.Event()

    def latest(self) -> int:
        row = self.conn.execute(
            "SELECT coalesce(max(snapshot_id), -1) FROM hatidata_agent.ducklake_snapshot"
        ).fetchone()
        return int(row[0]) if row else -1

    def run(self) -> None:
        last = -2
        while not self.stop.is_set():
            snap = self.latest()
            if snap != last:
                self.seen.append((time.monotonic(), snap))
                last = snap
            time.sleep(0.002)

    def close(self) -> None:
        self.stop.set()
        self.join()

    def first_after(self, snap: int) -> float:
        """When a snapshot later than `snap` was first seen (inf: not yet)."""
        for at, s in self.seen:
            if s > snap:
                return at
        return float("inf")


def until_found(c: psycopg.Connection, text: str, limit: float = LIMIT) -> tuple[float, int]:
    """(monotonic time found, searches run)."""
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < limit:
        n += 1
        rows = c.execute("SELECT content FROM search_memory(%s, top_k := 3)", (text,)).fetchall()
        if any(r[0] == text for r in rows):
            return time.monotonic(), n
    return float("inf"), n


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def show(name: str, xs: list[float]) -> None:
    print(
        f"{name}: p50 {statistics.median(xs) * 1000:.0f} ms, p90 {pct(xs, 0.9) * 1000:.0f} ms,"
        f" max {max(xs) * 1000:.0f} ms (n={len(xs)}, over 1 s: {sum(x > 1.0 for x in xs)})"
    )


def b_stages(log: str) -> None:
    """Stage B inside B, from its debug log: the poller's tick (snapshot changes read)
    and the memories' catch-up (change feed read, then applied locally and indexed)."""
    ticks = [float(x) for x in re.findall(r"snapshot \d+ read in (\d+) ms; memories", log)]
    feed = re.findall(r"memories of snapshot \d+ read in (\d+) ms, applied in (\d+) ms", log)
    for name, xs in (
        ("B: tick's catalog read (ms)", ticks),
        ("B: change feed read (ms)", [float(r) for r, _ in feed]),
        ("B: applied and indexed (ms)", [float(a) for _, a in feed]),
    ):
        if xs:
            print(f"{name}: p50 {statistics.median(xs):.0f}, p90 {pct(xs, 0.9):.0f},"
                  f" max {max(xs):.0f} (n={len(xs)})")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="?", default=50)
    ap.add_argument("--new-proxy", type=int, default=0, help="memories stored before a 3rd start")
    ap.add_argument("--stages", action="store_true", help="B's catch-up stages from its debug log")
    opts = ap.parse_args()
    args = ("--embedding-provider", "hash", "--mcp-port", "0", "--rest-port", "0")
    if opts.stages:
        args += ("--log-level", "debug")
    with LakeCluster("lake-vis", *args) as lake, contextlib.ExitStack() as cleanup:
        proc_a, proc_b = lake.start(timeout=120), lake.start(timeout=120)
        a, b = (psycopg.connect(p.dsn, autocommit=True) for p in (proc_a, proc_b))
        watch = SnapshotWatch(lake.pg.dsn)
        cleanup.callback(watch.close)  # before the catalog stops
        watch.start()
        store, stage_a, stage_b, total = [], [], [], []
        at_once = 0
        for i in range(opts.n):
            text = f"visibility probe {i} {time.time()}"
            before = watch.latest()
            t0 = time.monotonic()
            a.execute("SELECT * FROM store_memory(%s, wait := true)", (text,))
            acked = time.monotonic()
            store.append(acked - t0)
            found_a, tries = until_found(a, text, 1.0)
            at_once += tries == 1 and found_a < float("inf")
            found_b, _ = until_found(b, text)
            in_lake = watch.first_after(before)
            total.append(found_b - acked)
            stage_a.append(max(0.0, in_lake - acked))
            stage_b.append(found_b - max(in_lake, acked))
            time.sleep(0.05 * (i % 7))  # not in step with the poll tick
        print(f"load average {os.getloadavg()}")
        show("store_memory(wait := true) on A", store)
        print(f"found on A by the first search after the store: {at_once} of {opts.n}")
        show("stage A: acknowledged on A -> committed to the agent lake", stage_a)
        show("stage B: lake commit -> found on B", stage_b)
        show("total: acknowledged on A -> found on B", total)
        if opts.stages:
            b_stages(proc_b.log())
        late = sum(t > 1.0 for t in total)
        print(f"target (every one within 1 s): {'met' if not late else f'NOT met ({late} late)'}")
        if opts.new_proxy:
            batch = 500
            for start in range(0, opts.new_proxy, batch):
                texts = [f"bulk {start + j} {time.time()}" for j in range(batch)]
                texts = texts[: opts.new_proxy - start]
                a.execute(
                    "SELECT count(*) FROM store_memories(%s, wait := true)", (json.dumps(texts),)
                )
            time.sleep(2.0)  # published
            t0 = time.monotonic()
            proc_c = lake.start(timeout=120)
            started = time.monotonic() - t0
            took = [ln for ln in proc_c.log().splitlines()
                    if "memories from other proxies" in ln]  # fmt: skip
            print(f"new proxy on a lake of {opts.n + opts.new_proxy} memories: started in"
                  f" {started:.2f} s ({took[-1] if took else '?'}); load {os.getloadavg()}")  # fmt: skip
        if late:
            sys.exit(1)


if __name__ == "__main__":
    main()
