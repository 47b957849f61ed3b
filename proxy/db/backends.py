"""The live client connections ("backends"), as pg_stat_activity and the signal functions
see them.

Each wire connection is registered here after login and removed when it ends. The
registry is shared by every connection's thread and DuckDB's worker threads (the SQL
functions in `proxy.db.backend_functions` read it), so it is guarded by a lock; that lock
is taken only at connect, disconnect and when a query reads pg_stat_activity or signals a
backend, never per ordinary statement.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from proxy.db.watchdog import Interruptible

if TYPE_CHECKING:
    from proxy.core.identity import Identity
    from proxy.db.settings import SessionSettings

# pg_stat_activity.state after a statement, by the transaction status ReadyForQuery reports.
IDLE_STATES = {"I": "idle", "T": "idle in transaction", "E": "idle in transaction (aborted)"}


class CopyProgress:
    """A running COPY's counters, as pg_stat_progress_copy shows them. Only the session's
    own thread writes them, both in one store, so a reader sees a pair that belongs
    together."""

    __slots__ = ("command", "counts", "relation")

    def __init__(self, command: str, relation: str | None) -> None:
        self.command = command  # COPY FROM / COPY TO
        self.relation = relation  # the table's DuckDB SQL name; None: COPY (query) TO
        self.counts = (0, 0)  # (bytes processed, tuples processed)


class Activity:
    """What one session is doing: (state, query, query_start, state_change, xact_start),
    and the counters of a COPY it runs (`progress`).

    Only the session's own thread writes it, at most twice per statement; each change is
    one attribute store of a whole tuple, so another thread always reads a consistent
    state without a lock. Times are Unix epoch seconds; xact_start None = no transaction.
    """

    __slots__ = ("now", "progress")

    def __init__(self) -> None:
        self.progress: CopyProgress | None = None
        self.now: tuple[str, str, float | None, float, float | None] = (
            "idle",
            "",
            None,
            time.time(),
            None,
        )

    def running(self, sql: str) -> None:
        """A statement starts: the first one of a transaction also starts xact_start."""
        t = time.time()
        xact = self.now[4]
        self.now = ("active", sql, t, t, t if xact is None else xact)

    def ready(self, txn_status: str) -> None:
        """ReadyForQuery: idle, keeping the last query. An aborted block shows no
        xact_start, as in Postgres."""
        self.progress = None
        _, sql, started, _, xact = self.now
        self.now = (
            IDLE_STATES.get(txn_status, "idle"),
            sql,
            started,
            time.time(),
            xact if txn_status == "T" else None,
        )


def is_superuser(who: Identity) -> bool:
    """Trust logins and configured users are superusers; API keys (admin keys too) are not:
    an organisation's admin must not see or end another organisation's sessions."""
    return who.superuser


class NotifyPort(Protocol):
    """A wire session's LISTEN / NOTIFY (proxy/pgserver/notify_wire.py SessionNotify)."""

    def add(self, channel: str, payload: str) -> None: ...

    def channels(self) -> list[str]: ...


@dataclass(eq=False)
class Backend:
    pid: int
    secret_key: int
    runner: Interruptible  # the connection's Runner (proxy.pgserver.runner)
    # Set as the session's DuckDB variable: proves which backend a SQL function call comes
    # from (a client can read its own, never another session's).
    token: str = ""
    user: str = ""
    superuser: bool = False
    key_id: str | None = None  # the API key the session logged in with
    org_id: str = ""  # the login's organisation: other organisations never see the session
    database: str = ""  # the database it is connected to ("": the default one)
    datid: int = 0
    client_addr: str | None = None  # None: a Unix socket
    client_port: int = -1
    backend_start: float = field(default_factory=time.time)
    settings: SessionSettings | None = None  # application_name follows SET
    activity: Activity = field(default_factory=Activity)
    # Queue a NoticeResponse (message, sqlstate, severity) on the session; only while
    # the session's own statement runs (its thread is then inside DuckDB, not writing).
    notice: Callable[[str, str, str], None] | None = None
    terminate: Callable[[], None] | None = None  # end the connection with FATAL 57P01
    notify: NotifyPort | None = None  # pg_notify(), pg_listening_channels() (notify_functions)

    def same_role(self, other: Backend) -> bool:
        """Postgres' has_privs_of_role: the same login user and the same API key (a key
        login may use any user name, so the name alone proves nothing)."""
        return self.user == other.user and self.key_id == other.key_id


class Backends:
    """pid -> Backend of every live wire connection; safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_pid: dict[int, Backend] = {}

    def add(self, backend: Backend) -> None:
        with self._lock:
            self._by_pid[backend.pid] = backend

    def remove(self, pid: int) -> None:
        with self._lock:
            self._by_pid.pop(pid, None)

    def get(self, pid: int) -> Backend | None:
        with self._lock:
            return self._by_pid.get(pid)

    def all(self) -> list[Backend]:
        with self._lock:
            return sorted(self._by_pid.values(), key=lambda b: b.pid)

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_pid)

    def caller(self, token: str | None) -> Backend | None:
        """The backend whose session holds `token` (None: not a wire session, or forged)."""
        if not token:
            return None
        pid, _, _ = token.partition(":")
        backend = self.get(int(pid)) if pid.isdigit() else None
        if backend is None or not backend.token:
            return None
        return backend if hmac.compare_digest(backend.token, token) else None

    def wait_gone(self, backend: Backend, timeout_s: float) -> bool:
        """Wait up to timeout_s for `backend` to leave the registry; True when it has."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.get(backend.pid) is not backend:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(0.01, left))
