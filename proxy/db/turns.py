"""Turns: at most a few client connections run at once, served first come, first served.

Why: every client connection has a thread of its own (connection_threads.py), and with
50-200 of them runnable they all contend for the GIL, which is not fair: whichever thread
the OS wakes first takes it, so under load some connections were served again and again
while others waited seconds (bench/load.py at 50 connections: point SELECT p99 25x its
p50, every connection with a gap of over 1 s). A connection now takes a turn when a
message of the client is ready and gives it back when it waits for the client again; the
waiting connections sleep on their own event loop, in FIFO order, instead of spinning on
the GIL.

A turn held longer than `long_s` (a long analytic query, a slow client reading its
result, a COPY) stops counting as soon as someone waits: long work never blocks short
statements for more than `long_s`, it only stops being one of the `slots` runners.
A connection whose statement runs on the main loop meanwhile (agent functions:
`connection_threads.on_main`) keeps its turn: that work is its statement's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections import deque

LONG_S = 0.05  # a turn held this long no longer keeps waiting connections out


SLOTS_PER_CORE = 4  # running connections per CPU core when none are configured
MIN_SLOTS = 8


def default_slots(configured: int = 0) -> int:
    """`running_connections` as configured; 0: SLOTS_PER_CORE per CPU core, at least
    MIN_SLOTS.

    Why more than one per core: a running connection spends much of its turn waiting
    off the GIL (its query's embedding, DuckDB, a WAL fsync), and the statements running
    meanwhile are what share the model's passes and the memory writer's commits. With one
    per core (2) a search_memory's embedding ran alone (1.13 texts a pass under
    bench/load.py at 200 connections); with 8, 2.4-3.1 texts a pass, and the server spent
    3.8-4.3 ms of CPU a statement instead of 5.4-6.1 (same run, load 14-17), with the
    same p99/mean gap. Still a bound: 200 runnable threads scrambling for the GIL is
    what turns exist to prevent."""
    if configured < 0:
        raise ValueError(f"running_connections must be 0 or positive, not {configured}")
    return configured or max(MIN_SLOTS, SLOTS_PER_CORE * (os.cpu_count() or 2))


class Turn:
    """One connection's place: held (`counted` while it keeps others out) or not.

    `asked`: when the connection, with a client message ready, asked for this turn (None
    once read by `asked_since`): its statement's clock starts there, as PostgreSQL's
    statement_timeout counts from the statement's receipt, the wait for a turn included.
    """

    __slots__ = ("held", "counted", "since", "asked")

    def __init__(self) -> None:
        self.held = False
        self.counted = False
        self.since = 0.0
        self.asked: float | None = None


class _Waiter:
    __slots__ = ("turn", "loop", "future")

    def __init__(self, turn: Turn, loop: asyncio.AbstractEventLoop) -> None:
        self.turn = turn
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Turns:
    def __init__(self, slots: int, long_s: float = LONG_S) -> None:
        self.slots = slots  # set once by the server at start (`running_connections`)
        self.long_s = long_s
        self._lock = threading.Lock()
        self._queue_filled = threading.Condition(self._lock)
        self._counted: set[Turn] = set()
        self._queue: deque[_Waiter] = deque()
        # One thread looks for turns held long while anyone waits. Why not the waiters
        # themselves: at 200 connections some 200 waiting threads each woke every long_s
        # to look, 4,000 wake-ups (GIL and event-loop rounds) a second of a 2-core CPU.
        self._watcher: threading.Thread | None = None
        self.waits = 0  # takes that had to wait (for tests and benchmarks)
        self.demoted = 0  # turns that stopped counting because they ran long

    async def take(self, turn: Turn) -> None:
        """Hold `turn` (no-op when held); waits in FIFO order."""
        if turn.held:
            return
        turn.asked = time.monotonic()
        with self._lock:
            if len(self._counted) < self.slots and not self._queue:
                self._grant(turn)
                return
            waiter = _Waiter(turn, asyncio.get_running_loop())
            if not self._queue:
                self._queue_filled.notify()
            self._queue.append(waiter)
            self.waits += 1
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch, name="hatiproxy-turns", daemon=True
                )
                self._watcher.start()
        try:
            await waiter.future
        except BaseException:
            with self._lock:
                if turn.held:  # granted as it was cancelled: hand it on
                    self._release(turn)
                else:
                    with contextlib.suppress(ValueError):
                        self._queue.remove(waiter)
            raise

    def give(self, turn: Turn) -> None:
        if not turn.held:
            return
        with self._lock:
            self._release(turn)

    # --- under self._lock ------------------------------------------------------------

    def _grant(self, turn: Turn) -> None:
        turn.held = turn.counted = True
        turn.since = time.monotonic()
        self._counted.add(turn)

    def _release(self, turn: Turn) -> None:
        turn.held = False
        if turn.counted:
            turn.counted = False
            self._counted.discard(turn)
        self._admit()

    def _admit(self) -> None:
        while self._queue and len(self._counted) < self.slots:
            waiter = self._queue.popleft()
            if waiter.future.cancelled():
                continue
            self._grant(waiter.turn)
            try:
                waiter.loop.call_soon_threadsafe(_wake, waiter.future)
            except RuntimeError:  # its loop has closed: the connection is gone
                self._release(waiter.turn)
                return

    def _watch(self) -> None:
        """The watcher thread: every long_s while anyone waits, demote long turns."""
        with self._lock:
            while True:
                while not self._queue:
                    self._queue_filled.wait()
                self._queue_filled.wait(self.long_s)
                bar = time.monotonic() - self.long_s
                for turn in [t for t in self._counted if t.since < bar]:
                    turn.counted = False
                    self._counted.discard(turn)
                    self.demoted += 1
                self._admit()


TURNS = Turns(default_slots())
_local = threading.local()


def turn_of_thread() -> Turn:
    """This connection thread's turn (one connection per thread)."""
    turn = getattr(_local, "turn", None)
    if turn is None:
        turn = _local.turn = Turn()
    return turn


def asked_since() -> float:
    """When this thread's statement arrived: the time its connection asked for the turn
    it holds, read once (later statements of the same turn start when they are read);
    now when it asked none."""
    turn = getattr(_local, "turn", None)
    asked = None if turn is None else turn.asked
    if asked is None:
        return time.monotonic()
    turn.asked = None
    return asked


def give_thread_turn() -> Turn | None:
    """Give back this thread's turn if it holds one; returns it (to take again), or None."""
    turn = getattr(_local, "turn", None)
    if turn is None or not turn.held:
        return None
    TURNS.give(turn)
    return turn
