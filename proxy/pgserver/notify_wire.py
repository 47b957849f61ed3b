"""One wire session's side of LISTEN / NOTIFY over the server's Hub (proxy/core/notify_hub.py).

The session's open transaction collects NOTIFY / pg_notify() calls and LISTEN / UNLISTEN
(PendingTransaction); the transaction hooks (owner_outcome.py) commit them to the hub
or drop them, savepoints included. pg_notify() runs inside DuckDB, possibly on DuckDB's
worker threads, so the pending state is guarded by a lock. Committed notifications
queue on the listener in the hub, which wakes the listening connection's event loop
(`wake`, thread-safe); the session writes them as NotificationResponse ('A') when it is
idle: before ReadyForQuery outside a block, or while it waits for the client's next
message -- never inside a row stream or a COPY.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from proxy.core.notify_hub import Hub, PendingTransaction
from proxy.wire import messages as m
from proxy.wire.errors import PgError

log = logging.getLogger("hatiproxy.notify")


class SessionNotify:
    """LISTEN / NOTIFY of one connection (`pid`: its BackendKeyData pid, the hub's key);
    `scope`: its database and organisation (notify_hub.scope). Without a hub (before login)
    nothing is pending."""

    def __init__(self, hub: Hub | None = None, pid: int = 0, scope: str = "") -> None:
        self.hub = hub
        self.pid = pid
        self.scope = scope
        self._lock = threading.Lock()
        self._pending = PendingTransaction()

    def attach(self, wake: Callable[[], None]) -> None:
        if self.hub is not None:
            self.hub.attach(self.pid, self.scope, wake)

    def detach(self) -> None:
        if self.hub is not None:
            self.hub.detach(self.pid)

    # --- the open transaction -----------------------------------------------------------

    def add(self, channel: str, payload: str) -> None:
        """pg_notify() (from DuckDB's threads): ValueError for an empty or long channel
        name, a long payload (the UDF reports 22023)."""
        with self._lock:
            self._pending.notify(channel, payload)

    def notify(self, channel: str, payload: str) -> None:
        """NOTIFY: 22023 for an empty or long channel name, a long payload."""
        try:
            self.add(channel, payload)
        except ValueError as exc:
            raise PgError("22023", str(exc)) from None

    def listen(self, channel: str) -> None:
        with self._lock:
            self._pending.listen(channel)

    def unlisten(self, channel: str | None) -> None:
        with self._lock:
            self._pending.unlisten(channel)

    def savepoint(self, name: str) -> None:
        with self._lock:
            self._pending.savepoint(name)

    def release(self, name: str) -> None:
        with self._lock:
            self._pending.release(name)

    def rollback_to(self, name: str) -> None:
        with self._lock:
            self._pending.rollback_to(name)

    def commit(self) -> None:
        """The transaction committed: its LISTEN / UNLISTEN apply, its notifications go."""
        pending = self._pending
        if not (pending.notifies or pending.actions or pending.savepoints):
            return  # (every ReadyForQuery asks: most transactions notify nothing)
        with self._lock:
            pending, self._pending = self._pending, PendingTransaction()
        if self.hub is not None and (pending.notifies or pending.actions):
            self.hub.commit(self.pid, pending, self.pid)

    def discard(self) -> None:
        """The transaction rolled back (or failed): nothing of it takes effect."""
        pending = self._pending
        if not (pending.notifies or pending.actions or pending.savepoints):
            return
        with self._lock:
            self._pending = PendingTransaction()

    # --- delivery ---------------------------------------------------------------------

    def listening(self) -> bool:
        return self.hub is not None and bool(self.hub.channels(self.pid))

    def channels(self) -> list[str]:
        """pg_listening_channels(): what is committed, as in PostgreSQL."""
        return self.hub.channels(self.pid) if self.hub is not None else []

    def messages(self) -> list[bytes]:
        """The NotificationResponses queued for this connection, taken off the queue."""
        if self.hub is None:
            return []
        queued, dropped = self.hub.take(self.pid)
        if dropped:
            log.warning(
                "backend %d: %d notifications dropped (queue of %d full, client not reading)",
                self.pid,
                dropped,
                self.hub.queue_limit,
            )
        return [m.notification_response(n.pid, n.channel, n.payload) for n in queued]
