"""pg_notify() and pg_listening_channels() as DuckDB Python UDFs on the shared database.

The catalog macros pass the calling session's token (getvariable('__hati_backend'), see
backend_functions.py); the token names the wire session whose open transaction collects
the notification (its Backend.notify: proxy/pgserver/notify_wire.py), so a call once per
row of `SELECT pg_notify('c', x::text) FROM t` adds once per row, with parameters too.
Outside a wire session (MCP, REST) the executor gives its cursor a token of a
`StatementNotifies` (`detached`), publishes what a statement collected when it succeeds
and drops it when it fails; a token of neither kind is 0A000, never a silently dropped
notification.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import duckdb
from duckdb import sqltypes

from proxy.core.notify_hub import PendingTransaction
from proxy.db.backends import Backends, NotifyPort
from proxy.db.duckdb_errors import UdfError

NO_SESSION = "pg_notify() and pg_listening_channels() need a session to run in"


class StatementNotifies:
    """pg_notify() calls of a statement run outside a wire session (MCP, REST), for its
    caller to publish when it succeeds; such a caller listens to nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # DuckDB may call the UDF from several threads
        self.pending = PendingTransaction()

    def add(self, channel: str, payload: str) -> None:
        with self._lock:
            self.pending.notify(channel, payload)

    def channels(self) -> list[str]:
        return []

    def take(self) -> list[tuple[str, str]]:
        with self._lock:
            out, self.pending = self.pending.notifies, PendingTransaction()
        return out


_detached: dict[str, NotifyPort] = {}
_detached_lock = threading.Lock()


@contextmanager
def detached() -> Iterator[tuple[str, StatementNotifies]]:
    """A token for a cursor outside a wire session (no backend pid: `-:<random>`, which
    no Backend matches) and the collector pg_notify() calls with it reach."""
    token, port = "-:" + secrets.token_hex(16), StatementNotifies()
    with _detached_lock:
        _detached[token] = port
    try:
        yield token, port
    finally:
        with _detached_lock:
            _detached.pop(token, None)


def _port(backends: Backends, token: str | None) -> NotifyPort | None:
    caller = backends.caller(token)
    if caller is not None:
        return caller.notify
    with _detached_lock:
        return _detached.get(token or "")


def register(
    conn: duckdb.DuckDBPyConnection, backends: Backends, create: Callable[..., None]
) -> None:
    """`create`: backend_functions._create (keeps an earlier registration)."""

    def notify(token: str | None, channel: str | None, payload: str | None) -> str:
        port = _port(backends, token)
        if port is None:
            raise UdfError("0A000", NO_SESSION)
        try:
            port.add(channel or "", payload or "")  # NULL payload: '' as in PG
        except ValueError as exc:  # an empty or long channel name, a long payload
            raise UdfError("22023", str(exc)) from None
        return ""  # void: PostgreSQL prints an empty value

    def channels(token: str | None) -> list[str]:
        port = _port(backends, token)
        if port is None:
            raise UdfError("0A000", NO_SESSION)
        return port.channels()

    text: Any = sqltypes.VARCHAR
    create(conn, "__hati_notify", notify, [text, text, text], text)
    create(conn, "__hati_listening_channels", channels, [text], "VARCHAR[]")
