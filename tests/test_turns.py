"""Turns (proxy/db/turns.py): connections waiting to run are served first come, first
served, and a turn held long stops keeping others out. Each connection is a thread with its own event loop, as in the
server (db/connection_threads.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from proxy.db.turns import Turn, Turns, default_slots


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


def test_default_running_connections_is_four_per_core_at_least_eight(monkeypatch) -> None:  # noqa: ANN001
    # More than one per core: statements running at once share the model's passes and
    # the memory writer's commits (bench/load.py: CPU a statement down ~30% at 200
    # connections, turns.py).
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert default_slots() == 8
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    assert default_slots() == 16
    monkeypatch.setattr("os.cpu_count", lambda: None)
    assert default_slots() == 8
    assert default_slots(3) == 3  # as configured
    with pytest.raises(ValueError, match="0 or positive"):
        default_slots(-1)


def test_default_slots_let_eight_connections_run_at_once(monkeypatch) -> None:  # noqa: ANN001
    """On two cores, eight connections whose statements wait off the GIL (a model pass,
    a DuckDB call) all run together: none queues for a turn."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    turns = Turns(default_slots(), long_s=5.0)
    log: list[str] = []
    threads = [_start(turns, f"c{i}", log, 0.2) for i in range(8)]
    for t in threads:
        t.join()
    assert sorted(log) == sorted(f"c{i}" for i in range(8))
    assert turns.waits == 0
    ninth = [_start(turns, f"d{i}", log, 0.2) for i in range(9)]
    for t in ninth:
        t.join()
    assert turns.waits >= 1  # the ninth waited: still a bound
