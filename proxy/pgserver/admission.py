"""Admission control: at most max_connections client sessions, refused at once past it.

A slot is taken before a login's first await and given back when its connection ends, so
logins racing on their own threads (proxy/db/connection_threads.py) never exceed the
limit; a client past it gets FATAL 53300 `sorry, too many clients already`, as from
PostgreSQL, instead of a thread, a DuckDB cursor and a wait.
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger("hatiproxy.server")


class ConnectionSlots:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._taken = 0

    def take(self, user: str) -> bool:
        with self._lock:
            if self._taken < self.limit:
                self._taken += 1
                return True
        log.warning(
            "refused a connection of user %r: max_connections (%d) reached", user, self.limit
        )
        return False

    def give(self, taken: bool = True) -> None:
        """Give back a slot (nothing when `taken` is false: the login never got one)."""
        if not taken:
            return
        with self._lock:
            self._taken -= 1

    @property
    def taken(self) -> int:
        return self._taken
