"""What one proxy of a DuckLake writes to the agent layer, the others find (issue 25):
memories stored through A are found by search_memory on B, session events appended
through A by search_sessions on B, each one once and events in their order; a proxy
started later on the lake takes all of them in its first catch-up (a bulk load, not
row by row) and finds each once too.

The target is 1 s from the acknowledgement on A to found on B; a shared CI machine can
be far slower, so here each must show within DEADLINE (the latencies are printed) and
bench/lake_memory_visibility.py and bench/lake_sessions.py time the 1 s.

Agent ids here start with `vis25-` (no other lake test uses them)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import psycopg

from tests.conftest import ServerProcess
from tests.lake.conftest import LakeCluster

DEADLINE = 20.0  # seconds
N = 12  # items per test


def _until(check: Any, what: str) -> float:
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < DEADLINE, f"{what} not within {DEADLINE} s"
    return time.monotonic() - start


def _memories(c: psycopg.Connection, text: str) -> list[str]:
    rows = c.execute("SELECT content FROM search_memory(%s, top_k := 10)", (text,)).fetchall()
    return [r[0] for r in rows]


def _events(p: ServerProcess, agent: str, word: str) -> list[str]:
    rows = p.function_rows("search_sessions", agent, query=word, mode="keyword", top_k=10)
    return [r["text"] for r in rows]


def test_memories_from_one_proxy_are_found_on_another_each_once_and_by_a_new_proxy(
    lake: LakeCluster,
) -> None:
    a, b, _ = lake.proxies
    tag = uuid.uuid4().hex[:8]
    texts = [f"vis25 {tag} quarterly note number {i} about owl{i}x{tag}" for i in range(N)]
    took = []
    with (
        psycopg.connect(a.dsn, autocommit=True) as ca,
        psycopg.connect(b.dsn, autocommit=True) as cb,
    ):
        for text in texts:
            ca.execute("SELECT * FROM store_memory(%s, wait := true)", (text,))
            # read-after-write on the proxy that stored it: the first search finds it
            assert _memories(ca, text).count(text) == 1
            took.append(_until(lambda t=text: t in _memories(cb, t), f"{text!r} on B"))
        for text in texts:  # each once, not once per snapshot it was seen in
            assert _memories(cb, text).count(text) == 1, text
    print(f"memory on A -> found on B: {sorted(round(t, 2) for t in took)} s")
    # a proxy started on the lake now: its first catch-up takes them all, each once
    c = lake.start_proxy()
    with psycopg.connect(c.dsn, autocommit=True) as cc:
        for text in texts:
            assert _memories(cc, text).count(text) == 1, text


def test_events_from_one_proxy_are_found_on_another_once_in_order_and_by_a_new_proxy(
    lake: LakeCluster,
) -> None:
    a, b, _ = lake.proxies
    agent, sid = "vis25-events", f"s-{uuid.uuid4().hex[:8]}"
    a.function_rows("create_session", agent, app_name="app", user_id="u", session_id=sid)
    words = [f"heron{uuid.uuid4().hex[:8]}" for _ in range(N)]
    took = []
    for i, word in enumerate(words):
        text = f"round {i}: the {word} report"
        a.function_rows("append_event", agent, session_id=sid, author="user",
            message={"role": "user", "parts": [{"type": "text", "text": text}]},
        )  # fmt: skip
        took.append(_until(lambda w=word, t=text: t in _events(b, agent, w), f"{word} on B"))
    print(f"event on A -> found by search on B: {sorted(round(t, 2) for t in took)} s")

    def each_once_in_order(p: ServerProcess) -> None:
        for i, word in enumerate(words):
            assert _events(p, agent, word) == [f"round {i}: the {word} report"], word
        seqs = [e["seq"] for e in p.function_rows("session_events", agent, session_id=sid)]
        assert seqs == sorted(set(seqs)) and len(seqs) == N

    each_once_in_order(b)
    each_once_in_order(lake.start_proxy())
