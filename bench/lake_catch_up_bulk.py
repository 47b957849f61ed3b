"""What a proxy starting on a lake that holds N memories and N session events pays to index
them in its first catch-up (issue 25), in process, same run: the session index rows
written two statements per event (`search.index_row`, the old path) against
`search.index_rows` (two statements for all), and memory vectors added row by row
(`VectorIndex.add`) against `VectorIndex.add_many` (a block per agent).

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/lake_catch_up_bulk.py [N]
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time

import duckdb
import numpy as np

from proxy.agent.memory.index import VectorIndex
from proxy.agent.memory.index_types import Attrs
from proxy.agent.sessions import ram_index, search
from proxy.agent.sessions.tables import INDEX


def _events(n: int) -> list[tuple[str, str, dict, dict]]:
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    session = {"session_id": "s1", "app_name": "app", "user_id": "u"}
    return [
        ("org", "agent", session, {"seq": i, "event_id": f"e{i}", "author": "user",
         "timestamp": at, "message": {"role": "user", "parts": [{"text": f"turn {i} kiwi"}]}})
        for i in range(n)
    ]  # fmt: skip


def _sessions(n: int) -> tuple[float, float]:
    took = []
    for bulk in (False, True):
        cur = duckdb.connect()
        cur.execute("CREATE SCHEMA hatidata_internal")
        search.install(cur, 8)
        rows = _events(n)
        t0 = time.perf_counter()
        with ram_index.journal(), cur.cursor() as c:
            c.begin()
            if bulk:
                search.index_rows(c, rows, fresh=True)
            else:
                for org, agent, session, event in rows:
                    search.index_row(c, org, agent, session, event)
            c.commit()
        took.append(time.perf_counter() - t0)
        assert cur.execute(f"SELECT count(*) FROM {INDEX}").fetchone() == (n,)
    return took[0], took[1]


def _memories(n: int, dims: int = 384) -> tuple[float, float]:
    vecs = np.random.default_rng(1).standard_normal((n, dims)).astype(np.float32)
    attrs = [Attrs(memory_id=f"m{i}", content=f"memory {i} about kiwis") for i in range(n)]
    agents = [f"a{i % 4}" for i in range(n)]
    one, bulk = VectorIndex(dims), VectorIndex(dims)
    t0 = time.perf_counter()
    for i in range(n):
        one.add("org", agents[i], i, vecs[i], attrs[i])
    t1 = time.perf_counter()
    bulk.add_many(["org"] * n, agents, np.arange(n), vecs, attrs)
    t2 = time.perf_counter()
    assert len(one) == len(bulk) == n
    return t1 - t0, t2 - t1


def main(n: int) -> None:
    for name, (old, new) in (
        ("session index rows", _sessions(n)),
        ("memory vectors", _memories(n)),
    ):
        print(f"{name}, {n}: row by row {old:.3f} s, bulk {new:.3f} s ({old / new:.1f}x)")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
