"""SIGINT / SIGTERM for `hatiproxy serve`: the first asks for a clean shutdown, the second
exits at once (code 130), and a shutdown that overruns its limit is cut short the same way.

The handlers are Python signal handlers: they run on the main thread between bytecodes,
and the server keeps that thread free (its event loop; closing the database runs on a
worker thread), so a second Ctrl-C is acted on at once. The loop's own signal handler
(`add_signal_handler`) was not enough: it only set the stop event again. The time limit is
a timer thread, so it holds even if the main thread is stuck.

What an immediate exit leaves: committed data is safe (DuckDB's WAL is replayed at the
next start, HNSW indexes are rebuilt); statements still running are rolled back and
embedding-cache entries not yet written are recomputed when next needed. The log line
names them (`describe`).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable

log = logging.getLogger("hatiproxy")

SIGNALS = {signal.SIGINT, signal.SIGTERM}
SHUTDOWN_LIMIT_S = 10.0  # a clean shutdown that takes longer is cut short
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C


class SignalWatch:
    """Install from the main thread. `on_stop` (called on the main thread) is told of the
    first signal; `describe()` names what an immediate exit abandons."""

    def __init__(self, limit_s: float = SHUTDOWN_LIMIT_S) -> None:
        self.limit_s = limit_s
        self.requested = threading.Event()  # the first signal came
        self.finished = threading.Event()  # the clean shutdown is done: no forced exit
        self.on_stop: Callable[[], None] | None = None
        self.describe: Callable[[], str] = lambda: "nothing"
        self._previous: dict[int, object] = {}

    def start(self) -> None:
        for sig in SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)

    def stop(self) -> None:
        """The server is down: no forced exit, and the previous handlers again."""
        self.finished.set()
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]

    def _handle(self, signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        if self.requested.is_set():
            self._exit(EXIT_INTERRUPTED, f"second {name}")
        self.requested.set()
        log.info(
            "%s: shutting down (at most %.0f s; send it again to exit at once)",
            name,
            self.limit_s,
        )
        timer = threading.Timer(self.limit_s, self._overrun)
        timer.daemon = True
        timer.start()
        if self.on_stop is not None:
            self.on_stop()

    def _overrun(self) -> None:
        if not self.finished.is_set():
            self._exit(1, f"shutdown did not finish within {self.limit_s:.0f} s")

    def _exit(self, code: int, why: str) -> None:
        try:
            what = self.describe()
        except Exception as exc:  # never let the report stop the exit
            what = f"unknown ({exc})"
        log.warning(
            "%s: exiting now (code %d); abandoned: %s. Committed data is kept; the next "
            "start replays the WAL and rebuilds HNSW indexes.",
            why,
            code,
            what,
        )
        for handler in logging.getLogger().handlers:
            handler.flush()
        sys.stderr.flush()
        os._exit(code)
