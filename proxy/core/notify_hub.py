"""LISTEN / NOTIFY bookkeeping without I/O: who listens to what, what a transaction has
pending, what each listener is to be sent.

PostgreSQL's rules, kept here so the wire edge only writes messages:
- NOTIFY and LISTEN / UNLISTEN take effect when the transaction commits; ROLLBACK drops
  them, ROLLBACK TO SAVEPOINT drops those made after the savepoint.
- Within one transaction an identical (channel, payload) pair is delivered once; the
  order of first occurrence is kept.
- A payload of 8000 bytes or more is 22023 `payload string too long`.
- A notifier that listens on the channel gets its own notification.

Scope: PostgreSQL scopes notifications to a database; here a scope is the database and
the caller's organisation (from its identity, `scope`), so two databases and two
organisations never see each other's channels.

Per-listener queues are bounded (QUEUE_LIMIT). PostgreSQL's shared queue holds 8 GB and
blocks notifiers when full; blocking a notifier on a slow listener is worse here, so a
full queue drops the oldest entry, counts it (`dropped`), and the caller logs it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_PAYLOAD_BYTES = 7999
QUEUE_LIMIT = 10_000


def scope(database: str, org_id: str) -> str:
    """The scope of a session on `database` (proxy/db/databases.py) of organisation `org_id`."""
    return f"{database}\x00{org_id}"


class PayloadTooLong(ValueError):
    """22023: PostgreSQL's `payload string too long`."""

    sqlstate = "22023"

    def __init__(self) -> None:
        super().__init__("payload string too long")


class ChannelNameError(ValueError):
    """22023: an empty channel name (PostgreSQL: `channel name cannot be empty`)."""

    sqlstate = "22023"


@dataclass(frozen=True)
class Notification:
    channel: str
    payload: str
    pid: int


def check_notify(channel: str, payload: str) -> None:
    """PostgreSQL's argument checks for NOTIFY / pg_notify()."""
    if not channel:
        raise ChannelNameError("channel name cannot be empty")
    if len(channel) >= 64:
        raise ChannelNameError("channel name too long")
    if len(payload.encode("utf-8")) > MAX_PAYLOAD_BYTES:
        raise PayloadTooLong()


@dataclass
class PendingTransaction:
    """What one open transaction has asked for; applied by Hub.commit."""

    notifies: list[tuple[str, str]] = field(default_factory=list)
    # ("listen" | "unlisten" | "unlisten_all", channel) in statement order
    actions: list[tuple[str, str]] = field(default_factory=list)
    savepoints: list[tuple[str, int, int]] = field(default_factory=list)
    # the pairs in `notifies`, for the dedup check (one per row of a large SELECT)
    seen: set[tuple[str, str]] = field(default_factory=set)

    def notify(self, channel: str, payload: str) -> None:
        check_notify(channel, payload)
        if (channel, payload) not in self.seen:
            self.seen.add((channel, payload))
            self.notifies.append((channel, payload))

    def listen(self, channel: str) -> None:
        self.actions.append(("listen", channel))

    def unlisten(self, channel: str | None) -> None:
        self.actions.append(("unlisten_all", "") if channel is None else ("unlisten", channel))

    def savepoint(self, name: str) -> None:
        self.savepoints.append((name, len(self.notifies), len(self.actions)))

    def _find(self, name: str) -> int | None:
        for i in range(len(self.savepoints) - 1, -1, -1):
            if self.savepoints[i][0] == name:
                return i
        return None

    def rollback_to(self, name: str) -> None:
        """ROLLBACK TO SAVEPOINT: drops what came after it; the savepoint stays."""
        i = self._find(name)
        if i is None:
            return
        _, n_notifies, n_actions = self.savepoints[i]
        del self.notifies[n_notifies:]
        self.seen = set(self.notifies)
        del self.actions[n_actions:]
        del self.savepoints[i + 1 :]

    def release(self, name: str) -> None:
        i = self._find(name)
        if i is not None:
            del self.savepoints[i:]


@dataclass
class Listener:
    """One connection: its channels, its queue of notifications not yet sent."""

    key: int
    scope: str
    channels: set[str] = field(default_factory=set)
    queue: deque[Notification] = field(default_factory=deque)
    dropped: int = 0
    wake: Callable[[], None] | None = None

    def channel_list(self) -> list[str]:
        """pg_listening_channels(): in no particular order in PostgreSQL; sorted here."""
        return sorted(self.channels)


class Hub:
    """All listeners of one server process, grouped by scope. Sessions run on threads of
    their own: every method holds the hub's lock (wake callbacks must not block)."""

    def __init__(self, queue_limit: int = QUEUE_LIMIT) -> None:
        self.queue_limit = queue_limit
        self.lock = threading.RLock()
        self._listeners: dict[int, Listener] = {}
        self._by_channel: dict[tuple[str, str], set[int]] = {}

    def attach(self, key: int, scope: str, wake: Callable[[], None] | None = None) -> Listener:
        with self.lock:
            listener = Listener(key, scope, wake=wake)
            self._listeners[key] = listener
            return listener

    def detach(self, key: int) -> None:
        with self.lock:
            listener = self._listeners.pop(key, None)
            if listener is None:
                return
            for channel in listener.channels:
                self._drop(listener.scope, channel, key)

    def _drop(self, scope: str, channel: str, key: int) -> None:
        keys = self._by_channel.get((scope, channel))
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by_channel[(scope, channel)]

    def commit(self, key: int, pending: PendingTransaction, pid: int) -> list[int]:
        """Apply a committed transaction: LISTEN / UNLISTEN first (PostgreSQL registers
        the listener before sending, so a self-notify in the same transaction arrives),
        then queue its notifications. Returns the listener keys that got something."""
        with self.lock:
            listener = self._listeners[key]
            for action, channel in pending.actions:
                if action == "listen":
                    listener.channels.add(channel)
                    self._by_channel.setdefault((listener.scope, channel), set()).add(key)
                elif action == "unlisten":
                    listener.channels.discard(channel)
                    self._drop(listener.scope, channel, key)
                else:
                    for name in list(listener.channels):
                        self._drop(listener.scope, name, key)
                    listener.channels.clear()
            return self.publish(listener.scope, pending.notifies, pid)

    def publish(self, scope: str, notifies: list[tuple[str, str]], pid: int) -> list[int]:
        """Queue committed notifications for every listener of their channel in scope
        (also used by the in-process executor, which has no listener of its own)."""
        with self.lock:
            woken: list[int] = []
            for channel, payload in notifies:
                for k in sorted(self._by_channel.get((scope, channel), ())):
                    target = self._listeners[k]
                    if len(target.queue) >= self.queue_limit:
                        target.queue.popleft()
                        target.dropped += 1
                    target.queue.append(Notification(channel, payload, pid))
                    if k not in woken:
                        woken.append(k)
            for k in woken:
                wake = self._listeners[k].wake
                if wake is not None:
                    wake()
            return woken

    def take(self, key: int) -> tuple[list[Notification], int]:
        """The queued notifications of one listener and how many were dropped since the
        last take; both are reset."""
        listener = self._listeners.get(key)  # (asked at every ReadyForQuery: no lock if
        if listener is None or not (listener.queue or listener.dropped):  # nothing queued)
            return [], 0
        with self.lock:
            listener = self._listeners.get(key)
            if listener is None:
                return [], 0
            out = list(listener.queue)
            listener.queue.clear()
            dropped, listener.dropped = listener.dropped, 0
            return out, dropped

    def channels(self, key: int) -> list[str]:
        with self.lock:
            listener = self._listeners.get(key)
            return listener.channel_list() if listener is not None else []
