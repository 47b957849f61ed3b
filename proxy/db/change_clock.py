"""A database's change clock: whether anything may have written to it since a moment.

Every pooled call on a database (proxy/db/pool.py) may write, so each one moves the
clock when it starts and when it ends; only reads declared as such (`PooledDB.read`)
leave it alone. A result read while no call was running and with the clock unmoved
since is what the database holds for as long as the clock stays there: the agent
relations' cache (proxy/execution/relation_cache.py) keys on it. Every write to the
agent database goes through a pool (it is never attached to client SQL: agent_db.py),
so no write escapes the clock, whichever connection or interface made it.
"""

from __future__ import annotations

import threading
from typing import Any


class ChangeClock:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generation = 0
        self._running = 0

    def begin(self) -> None:
        with self._lock:
            self._running += 1
            self._generation += 1

    def end(self) -> None:
        with self._lock:
            self._running -= 1
            self._generation += 1

    def stable(self) -> int | None:
        """The generation, or None while a call that may write is running."""
        with self._lock:
            return None if self._running else self._generation


_CLOCKS: dict[int, tuple[Any, ChangeClock]] = {}
_LOCK = threading.Lock()


def clock_for(db: Any) -> ChangeClock:
    """The clock of database connection `db` (every pool over it shares one)."""
    with _LOCK:
        found = _CLOCKS.get(id(db))
        if found is None or found[0] is not db:
            found = _CLOCKS[id(db)] = (db, ChangeClock())
        return found[1]
