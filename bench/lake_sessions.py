"""How long an event appended through one proxy of a DuckLake takes to be seen on another
(issue 25): by `session_events` (read from the lake) and by `search_sessions` (keyword,
from the other proxy's index, which follows the lake's snapshots). Three proxies over
one PostgreSQL 15 catalog; the append's own time on A is printed beside it.

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/lake_sessions.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import requests

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import start_pg

LIMIT = 30.0
AGENT = "bench-sessions"


def call(p: ServerProcess, fn: str, **args: Any) -> list[dict[str, Any]]:
    r = requests.post(
        f"{p.rest_url}/v1/functions/{fn}",
        json=args,
        headers={"X-HatiData-Agent-Id": AGENT},
        timeout=120,
    )
    r.raise_for_status()
    return r.json()["rows"]


def _until(check) -> float:
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > LIMIT:
            return float("inf")
    return time.monotonic() - t0


def _stats(name: str, xs: list[float]) -> None:
    print(f"{name}: p50 {statistics.median(xs):.3f} s, max {max(xs):.3f} s (n={len(xs)})")


def main(rounds: int) -> None:
    pg = start_pg()
    data = Path(tempfile.mkdtemp(prefix="bench-lake-sessions-"))
    lake = ("--lake-catalog", f"postgres:{pg.dsn}", "--lake-data", str(data))
    procs: list[ServerProcess] = []
    try:
        for _ in range(3):
            tmp = Path(tempfile.mkdtemp(prefix="bench-lake-sessions-p-"))
            args = ("--embedding-provider", "hash", "--auth-method", "trust", *lake)
            procs.append(start_server(tmp, *args, timeout=300))
        a, b, _ = procs
        sid = f"s-{uuid.uuid4().hex[:8]}"
        call(a, "create_session", app_name="bench", user_id="u", session_id=sid)
        append, events, reads, search = [], [], [], []
        first = 0  # rounds where B's first read after the append's return saw the event
        for i in range(rounds):
            word = f"kiwi{uuid.uuid4().hex[:8]}"
            msg = {"role": "user", "parts": [{"text": f"round {i} {word}"}]}
            t0 = time.monotonic()
            seq = call(a, "append_event", session_id=sid, author="user", message=msg)[0]["seq"]
            t1 = time.monotonic()
            append.append(t1 - t0)
            n = 0

            def seen(s: int = seq) -> bool:
                nonlocal n
                n += 1
                r0 = time.monotonic()
                got = call(b, "session_events", session_id=sid, last_n=1)
                reads.append(time.monotonic() - r0)
                return any(e["seq"] == s for e in got)

            events.append(_until(seen))
            first += n == 1
            t2 = time.monotonic()
            while not call(b, "search_sessions", query=word, mode="keyword", top_k=1):
                if time.monotonic() - t2 > LIMIT:
                    break
            search.append(time.monotonic() - t1)
        _stats("append on A (the call)", append)
        _stats("append's return on A -> session_events on B shows it", events)
        _stats("one session_events call on B", reads)
        print(f"B's first read after the append saw it in {first} of {rounds} rounds")
        _stats("append's return on A -> search_sessions (keyword) on B finds it", search)
        print(f"load average {os.getloadavg()}")
    finally:
        for p in procs:
            p.stop()
        pg.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
