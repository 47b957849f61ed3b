"""How long an event appended through one proxy of a DuckLake takes to be seen on another
(issue 25: every one within 1 s): by `search_sessions` (keyword, from the other proxy's
index, which follows the lake's snapshots), timed from the append's return on A; then
`session_events` on B (read from the lake) must have it at once. Three proxies over
one PostgreSQL 15 catalog; the append's own time on A is printed beside it.

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/lake_sessions.py [ROUNDS] [NEW_PROXY_EVENTS]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from typing import Any

import requests
from lake_cluster import LakeCluster, until

from tests.conftest import ServerProcess

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


def _stats(name: str, xs: list[float]) -> None:
    p90 = sorted(xs)[min(len(xs) - 1, int(0.9 * len(xs)))]
    print(
        f"{name}: p50 {statistics.median(xs):.3f} s, p90 {p90:.3f} s, max {max(xs):.3f} s"
        f" (n={len(xs)}, over 1 s: {sum(x > 1.0 for x in xs)})"
    )


def main(rounds: int, new_proxy: int = 0) -> None:
    args = ("--embedding-provider", "hash", "--auth-method", "trust")
    with LakeCluster("bench-lake-sessions", *args) as lake:
        a, b, _ = (lake.start() for _ in range(3))
        sid = f"s-{uuid.uuid4().hex[:8]}"
        call(a, "create_session", app_name="bench", user_id="u", session_id=sid)
        append, events, search = [], [], []
        for i in range(rounds):
            word = f"kiwi{uuid.uuid4().hex[:8]}"
            msg = {"role": "user", "parts": [{"text": f"round {i} {word}"}]}
            t0 = time.monotonic()
            seq = call(a, "append_event", session_id=sid, author="user", message=msg)[0]["seq"]
            t1 = time.monotonic()
            append.append(t1 - t0)
            # search first: its index follows the lake's snapshots (the stage measured)
            search.append(
                until(lambda w=word: bool(
                    call(b, "search_sessions", query=w, mode="keyword", top_k=1)))
            )  # fmt: skip
            t2 = time.monotonic()
            got = call(b, "session_events", session_id=sid, last_n=1)
            events.append(time.monotonic() - t2)
            assert any(e["seq"] == seq for e in got), "session_events on B lacks the event"
            time.sleep(0.05 * (i % 7))  # not in step with the poll tick
        _stats("append on A (the call)", append)
        _stats("append's return on A -> search_sessions (keyword) on B finds it", search)
        _stats("then one session_events call on B (read from the lake; has it)", events)
        late = sum(t > 1.0 for t in search)
        print(f"target (every one within 1 s): {'met' if not late else f'NOT met ({late} late)'}")
        print(f"load average {os.getloadavg()}")
        if new_proxy:  # a 4th proxy starting on a lake of many events indexes them all
            for start in range(0, new_proxy, 500):
                batch = [
                    {"author": "user", "message": {"role": "user", "parts": [{"text": f"bulk {j}"}]}}
                    for j in range(start, min(new_proxy, start + 500))
                ]  # fmt: skip
                call(a, "append_events", session_id=sid, events=batch)
            t0 = time.monotonic()
            late_proxy = lake.start(timeout=600)
            started = time.monotonic() - t0
            hits = call(late_proxy, "search_sessions", query="bulk", mode="keyword", top_k=1)
            print(
                f"new proxy on a lake of {rounds + new_proxy} events: started in {started:.2f} s"
                f" (search finds them: {bool(hits)}); load average {os.getloadavg()}"
            )
        if late:
            sys.exit(1)


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 20,
        int(sys.argv[2]) if len(sys.argv) > 2 else 0,  # events before a 4th proxy starts
    )
