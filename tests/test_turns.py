"""Turns (proxy/db/turns.py): connections waiting to run are served first come, first
served, and a turn held long stops keeping others out. Each connection is a thread with its own event loop, as in the
server (db/connection_threads.py)."""

from __future__ import annotations

import asyncio
import threading
import time

from proxy.db.turns import Turn, Turns


def _connection(turns: Turns, name: str, log: list[str], hold_s: float) -> None:
    async def run() -> None:
        turn = Turn()
        await turns.take(turn)
        log.append(name)
        await asyncio.sleep(hold_s)
        turns.give(turn)

    asyncio.run(run())


def _start(turns: Turns, name: str, log: list[str], hold_s: float) -> threading.Thread:
    t = threading.Thread(target=_connection, args=(turns, name, log, hold_s))
    t.start()
    return t


def _wait_queued(turns: Turns, n: int) -> None:
    deadline = time.monotonic() + 5
    while turns.waits < n:
        assert time.monotonic() < deadline, "connections never queued"
        time.sleep(0.005)


def test_waiting_connections_are_served_in_arrival_order() -> None:
    turns = Turns(1, long_s=5.0)
    log: list[str] = []
    first = _start(turns, "a", log, 0.2)
    while not log:
        time.sleep(0.005)
    later = []
    for i, name in enumerate("bcde", start=1):
        later.append(_start(turns, name, log, 0.01))
        _wait_queued(turns, i)  # each arrives after the one before
    for t in (first, *later):
        t.join(10)
    assert log == ["a", "b", "c", "d", "e"]


def test_a_long_turn_does_not_keep_a_short_statement_waiting() -> None:
    turns = Turns(1, long_s=0.05)
    log: list[str] = []
    long = _start(turns, "long", log, 0.8)  # a long analytic query, say
    while not log:
        time.sleep(0.005)
    started = time.monotonic()
    short = _start(turns, "short", log, 0.0)
    short.join(5)
    assert log == ["long", "short"]
    assert time.monotonic() - started < 0.6, "the short statement waited for the long one"
    assert turns.demoted == 1
    long.join(5)


def test_a_cancelled_waiter_gives_its_place_on() -> None:
    turns = Turns(1, long_s=5.0)
    holder = Turn()

    async def run() -> bool:
        await turns.take(holder)
        waiter = asyncio.create_task(turns.take(Turn()))
        await asyncio.sleep(0.01)
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        turns.give(holder)
        other = Turn()
        await asyncio.wait_for(turns.take(other), 1.0)  # the slot is free again
        return other.held

    assert asyncio.run(run())
