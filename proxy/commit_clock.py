"""Process-wide count of writes that commit, for ROLLBACK TO SAVEPOINT's replay.

Replaying a transaction's earlier writes (proxy/savepoints.py) is only exact when no
other transaction committed a write since it began: the replay runs on a new DuckDB
snapshot. Every writer of the database lives in this process, so each one brackets
its commit with `begin()` before and `end()` after:

- wire sessions: an autocommit write, an implicit block's commit, the COMMIT of an
  explicit block that wrote (proxy/runner.py, proxy/savepoints.py);
- main-loop DuckDB work (agent layer, MCP, REST), all of it (`Engine.run`);
- the embedding cache's writer thread and the embedded-column filler.

A transaction reads `finished` before its BEGIN. Later, `begun == that value` proves
that no write was in flight then and none has started since: nothing can have
committed in between. Reads by others never count; counting a write that then
rolls back only costs a refused replay.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CommitClock:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # += is not atomic across threads
        self.begun = 0
        self.finished = 0

    def begin(self) -> None:
        """Before a write that commits (or may) starts."""
        with self._lock:
            self.begun += 1

    def end(self) -> None:
        """After that write committed or rolled back; exactly once per begin()."""
        with self._lock:
            self.finished += 1

    @contextmanager
    def writing(self) -> Iterator[None]:
        self.begin()
        try:
            yield
        finally:
            self.end()

    def quiet_since(self, finished_before: int) -> bool:
        """True when no write began after `finished` was read as `finished_before`
        and none was in flight then."""
        return self.begun == finished_before


CLOCK = CommitClock()


class OpenWrite:
    """A wire session's write outside an explicit block, counted until it settles (its
    autocommit statement, implicit block or session ended)."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open = False

    def begin(self) -> None:
        if not self.open:
            self.open = True
            CLOCK.begin()

    def end(self) -> None:
        if self.open:
            self.open = False
            CLOCK.end()
