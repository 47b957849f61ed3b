"""Statement timeouts and vanished clients, watched from one thread.

While a connection's statement runs, its thread is inside DuckDB: its event loop can
neither fire a timer nor notice the client's socket closing. This thread does both for
every wire session: it interrupts a statement whose deadline has passed, and every
POLL_S it asks the kernel whether the client of a running statement has hung up.
"""

from __future__ import annotations

import math
import select
import threading
import time
from typing import Protocol

POLL_S = 0.1
_HUNG_UP = select.POLLRDHUP | select.POLLHUP | select.POLLERR


class Interruptible(Protocol):  # proxy.pgserver.runner.Runner, as far as the watchdog needs it
    running: bool
    started: float  # time.monotonic() when the running call began
    deadline: float | None  # time.monotonic() at which the running call times out

    def interrupt(self, reason: str = "cancel") -> None: ...


class Watchdog:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._clients: dict[Interruptible, int] = {}  # session -> its client's socket fd
        self._wake_at = math.inf
        self._thread: threading.Thread | None = None
        self._stopped = False

    def watch(self, session: Interruptible, fd: int) -> None:
        with self._cond:
            self._clients[session] = fd
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(
                    target=self._run, name="hatiproxy-watchdog", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def forget(self, session: Interruptible) -> None:
        with self._cond:
            self._clients.pop(session, None)

    def deadline_set(self, deadline: float) -> None:
        """A statement with a timeout started: wake up early enough for it."""
        with self._cond:
            if deadline < self._wake_at:
                self._wake_at = deadline
                self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        with self._cond:
            while not self._stopped:
                now = time.monotonic()
                self._wake_at = self._check(now)
                timeout = None if self._wake_at == math.inf else max(0.0, self._wake_at - now)
                self._cond.wait(timeout)

    def _check(self, now: float) -> float:
        """Interrupt what is due; return when to look again."""
        wake = now + POLL_S if self._clients else math.inf
        suspects: dict[int, Interruptible] = {}
        for session, fd in self._clients.items():
            if not session.running:
                continue
            deadline = session.deadline
            if deadline is not None:
                if deadline <= now:
                    session.interrupt("timeout")
                    continue
                wake = min(wake, deadline)
            if now - session.started >= POLL_S:
                suspects[fd] = session
        if suspects:
            poller = select.poll()
            for fd in suspects:
                poller.register(fd, _HUNG_UP)
            for fd, events in poller.poll(0):
                if events & _HUNG_UP:
                    suspects[fd].interrupt("disconnect")
        return wake
