"""pg_notify() and pg_listening_channels() as DuckDB Python UDFs on the shared database.

The catalog macros pass the calling session's token (getvariable('__hati_backend'), see
backend_functions.py); the token names the wire session whose open transaction collects
the notification (its Backend.notify: proxy/pgserver/notify_wire.py), so a call once per
row of `SELECT pg_notify('c', x::text) FROM t` adds once per row, with parameters too.
A call from outside a wire session (MCP, REST) has no transaction to commit it with:
0A000, never a silently dropped notification.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
from duckdb import sqltypes

from proxy.db.backends import Backends
from proxy.db.duckdb_errors import UdfError

NO_SESSION = (
    "pg_notify() and pg_listening_channels() need a Postgres wire connection: "
    "notifications are delivered to LISTENing wire sessions"
)


def register(
    conn: duckdb.DuckDBPyConnection, backends: Backends, create: Callable[..., None]
) -> None:
    """`create`: backend_functions._create (keeps an earlier registration)."""

    def notify(token: str | None, channel: str | None, payload: str | None) -> str:
        caller = backends.caller(token)
        if caller is None or caller.notify is None:
            raise UdfError("0A000", NO_SESSION)
        try:
            caller.notify.add(channel or "", payload or "")  # NULL payload: '' as in PG
        except ValueError as exc:  # an empty or long channel name, a long payload
            raise UdfError("22023", str(exc)) from None
        return ""  # void: PostgreSQL prints an empty value

    def channels(token: str | None) -> list[str]:
        caller = backends.caller(token)
        if caller is None or caller.notify is None:
            raise UdfError("0A000", NO_SESSION)
        return caller.notify.channels()

    text: Any = sqltypes.VARCHAR
    create(conn, "__hati_notify", notify, [text, text, text], text)
    create(conn, "__hati_listening_channels", channels, [text], "VARCHAR[]")
