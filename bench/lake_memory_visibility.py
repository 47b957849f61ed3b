"""How long a memory stored through one proxy takes to be found by search_memory through
another (issue 25: target 1 s), over a real PostgreSQL 15 catalog with two hatiproxy
processes; baseline in the same run: the same store and search on one proxy.

    PYTHONPATH=. .venv/bin/python bench/lake_memory_visibility.py [N]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from tests.conftest import start_server
from tests.differential.pgcluster import start_pg


def _until_found(c: psycopg.Connection, text: str, limit: float = 10.0) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        rows = c.execute("SELECT content FROM search_memory(%s, top_k := 3)", (text,)).fetchall()
        if any(r[0] == text for r in rows):
            return time.monotonic() - t0
    return float("inf")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    pg = start_pg()
    tmp = Path(tempfile.mkdtemp(prefix="lake-vis-"))
    procs = []
    try:
        args = ("--embedding-provider", "hash", "--mcp-port", "0", "--rest-port", "0",
                "--lake-catalog", f"postgres:{pg.dsn}", "--lake-data", str(tmp / "lake"))  # fmt: skip
        for name in ("a", "b"):
            procs.append(start_server(tmp / name, *args))
        a, b = (psycopg.connect(p.dsn, autocommit=True) for p in procs)
        local, cross = [], []
        for i in range(n):
            text = f"visibility probe {i} {time.time()}"
            t0 = time.monotonic()
            a.execute("SELECT * FROM store_memory(%s, wait := true)", (text,))
            stored = time.monotonic() - t0
            local.append(stored + _until_found(a, text))
            cross.append(stored + _until_found(b, text))
        p50 = statistics.median
        print(f"load: {os.getloadavg()[0]:.1f}")
        print(f"store+found on the same proxy: p50 {p50(local) * 1000:.0f} ms")
        print(
            f"store on A, found on B: p50 {p50(cross) * 1000:.0f} ms, "
            f"max {max(cross) * 1000:.0f} ms (ratio {p50(cross) / p50(local):.1f}x)"
        )
    finally:
        for p in procs:
            p.stop()
        pg.stop()


if __name__ == "__main__":
    main()
