"""pg_stat_activity, pg_cancel_backend and pg_terminate_backend as DuckDB Python UDFs.

The per-connection state lives in Python (`proxy.db.backends`), so the catalog reads it
through two functions registered once on the shared database:

- `__hati_backend_activity(token)`: the rows of pg_stat_activity (a LIST of STRUCT
  the view unnests);
- `__hati_signal_backend(token, pid, kind, timeout_ms)`: cancel or terminate.

Beside them, one pure function the catalog needs from the transpiler:
`__hati_pg_sql(text)`, a stored view query, default or CHECK with the transpiler's
division macros and function stand-ins turned back into PostgreSQL's text
(transpiler/stored_text.py).

`token` is the calling session's DuckDB variable `__hati_backend` ("<pid>:<secret>",
set at login; the catalog macros pass getvariable('__hati_backend')). DuckDB variables
are per connection, so a client can pass its own token but never learn another
session's: who is calling, and so what it may see and signal, cannot be forged.
Calls from outside a wire session (MCP, REST) carry no token and act as an
unprivileged caller.

Failures go back through `UdfError` (SQLSTATE + message, see proxy.db.duckdb_errors);
WARNINGs are queued on the caller's session while its statement runs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import duckdb
from duckdb import sqltypes

from proxy.db import notify_functions, number_format
from proxy.db.backends import Backend, Backends
from proxy.db.duckdb_errors import UdfError
from transpiler import stored_text

TOKEN_VARIABLE = "__hati_backend"  # the catalog macros read this name too
QUERY_BYTES = 1023  # track_activity_query_size = 1024, including the terminating NUL
NAME_BYTES = 63  # NAMEDATALEN - 1: application_name is a name in pg_stat_activity
DATID = 16384  # pg_database.oid of the one database (40_system.sql)

ACTIVITY_COLUMNS = (
    ("datid", "BIGINT"),
    ("datname", "VARCHAR"),
    ("pid", "INTEGER"),
    ("leader_pid", "INTEGER"),
    ("usesysid", "BIGINT"),
    ("usename", "VARCHAR"),
    ("application_name", "VARCHAR"),
    ("client_addr", "VARCHAR"),
    ("client_hostname", "VARCHAR"),
    ("client_port", "INTEGER"),
    ("backend_start", "TIMESTAMPTZ"),
    ("xact_start", "TIMESTAMPTZ"),
    ("query_start", "TIMESTAMPTZ"),
    ("state_change", "TIMESTAMPTZ"),
    ("wait_event_type", "VARCHAR"),
    ("wait_event", "VARCHAR"),
    ("state", "VARCHAR"),
    ("backend_xid", "BIGINT"),
    ("backend_xmin", "BIGINT"),
    ("query_id", "BIGINT"),
    ("query", "VARCHAR"),
    ("backend_type", "VARCHAR"),
)
# pg_stat_progress_copy before the view turns `relation` (a DuckDB SQL name) into relid
PROGRESS_COLUMNS = (
    ("pid", "INTEGER"),
    ("datid", "BIGINT"),
    ("datname", "VARCHAR"),
    ("relation", "VARCHAR"),
    ("command", "VARCHAR"),
    ("type", "VARCHAR"),
    ("bytes_processed", "BIGINT"),
    ("bytes_total", "BIGINT"),
    ("tuples_processed", "BIGINT"),
    ("tuples_excluded", "BIGINT"),
)
_PROGRESS_TYPE = "STRUCT(" + ", ".join(f"{name} {kind}" for name, kind in PROGRESS_COLUMNS) + ")[]"
_ACTIVITY_TYPE = "STRUCT(" + ", ".join(f"{name} {kind}" for name, kind in ACTIVITY_COLUMNS) + ")[]"
_EMPTY_ROW = dict.fromkeys(name for name, _ in ACTIVITY_COLUMNS)

# Postgres 15's messages (pg_signal_backend), by what is asked.
_NOT_SUPERUSER = {
    "cancel": "must be a superuser to cancel superuser query",
    "terminate": "must be a superuser to terminate superuser process",
}
_NOT_MEMBER = {
    "cancel": "must be a member of the role whose query is being canceled "
    "or member of pg_signal_backend",
    "terminate": "must be a member of the role whose process is being terminated "
    "or member of pg_signal_backend",
}

_notice_lock = threading.Lock()  # one query may call a UDF from several DuckDB threads


def token_sql(token: str) -> str:
    """The statement that gives a session's DuckDB connection its token."""
    return f"SET VARIABLE {TOKEN_VARIABLE} = '{token}'"


def address_sql(server: object, client: object) -> str:
    """The statements that give a session's DuckDB connection its socket's addresses
    (inet_server_addr() & co.); `server` / `client`: the socket's sockname / peername, a
    (host, port, ...) tuple over TCP, else a Unix socket's path: NULL, as PostgreSQL."""
    out = []
    for side, where in (("server", server), ("client", client)):
        tcp = isinstance(where, tuple) and len(where) >= 2
        host = "'" + str(where[0]).replace("'", "''") + "'" if tcp else "NULL"
        port = int(where[1]) if tcp else "NULL"
        out.append(f"SET VARIABLE __hati_{side}_addr = {host}")
        out.append(f"SET VARIABLE __hati_{side}_port = {port}")
    return "; ".join(out)


def register(
    conn: duckdb.DuckDBPyConnection,
    backends: Backends,
    *,
    database_name: str,
    database_oid: int = DATID,
    databases: Callable[[], list[tuple[int, str]]] | None = None,
    role_oids: Mapping[str, int],
) -> None:
    """Create the functions on `conn`'s database; before the catalog SQL uses them.
    `databases`: pg_database's (oid, name) rows, read at each use (proxy/db/databases.py)."""
    listed = databases or (lambda: [(database_oid, database_name)])

    def database_rows() -> list[dict[str, Any]]:
        return [{"oid": oid, "datname": name} for oid, name in listed()]

    def activity(token: str | None) -> list[dict[str, Any]]:
        return activity_rows(backends, token, database_name, role_oids)

    def signal(token: str | None, pid: int | None, kind: str, timeout_ms: int | None) -> Any:
        return signal_backend(backends, token, pid, kind, timeout_ms)

    def progress(token: str | None) -> list[dict[str, Any]]:
        return progress_rows(backends, token, database_name)

    _create(conn, "__hati_databases", database_rows, [], "STRUCT(oid BIGINT, datname VARCHAR)[]")
    notify_functions.register(conn, backends, _create)  # pg_notify, pg_listening_channels
    _create(conn, "__hati_backend_activity", activity, [sqltypes.VARCHAR], _ACTIVITY_TYPE)
    _create(conn, "__hati_backend_progress", progress, [sqltypes.VARCHAR], _PROGRESS_TYPE)
    # The catalog's view queries, defaults and CHECKs as PostgreSQL text (pg_dump).
    _create(
        conn,
        "__hati_pg_sql",
        stored_text.as_postgres,
        [sqltypes.VARCHAR],
        sqltypes.VARCHAR,
        pure=True,
    )
    _create(  # clock_timestamp(): the wall clock, read at each call
        conn,
        "__hati_wall_clock",
        lambda: datetime.now(UTC),
        [],
        sqltypes.TIMESTAMP_TZ,
    )
    _create(  # to_char(number, format): transpiler/pg_functions.py
        conn,
        "__hati_to_char_number",
        number_format.to_char_number,
        [sqltypes.VARCHAR, sqltypes.VARCHAR],
        sqltypes.VARCHAR,
        pure=True,
    )
    _create(
        conn,
        "__hati_signal_backend",
        signal,
        [sqltypes.VARCHAR, sqltypes.INTEGER, sqltypes.VARCHAR, sqltypes.BIGINT],
        sqltypes.BOOLEAN,
    )


def _create(
    conn: duckdb.DuckDBPyConnection,
    name: str,
    fn: Callable[..., Any],
    params: list[Any],
    result: Any,
    *,
    pure: bool = False,
) -> None:
    # Installed before on this database: keep that registration. (remove_function cannot
    # replace it: DuckDB keeps a function that has run, and calling it after its removal
    # crashes.)
    with contextlib.suppress(duckdb.NotImplementedException, duckdb.CatalogException):
        conn.create_function(
            name,
            fn,
            params,
            conn.dtype(result) if isinstance(result, str) else result,
            # Backend functions: a NULL token still needs an answer, and they are volatile
            # (never folded or cached, never inside TRY()).
            null_handling="default" if pure else "special",
            side_effects=not pure,
        )


# --- pg_stat_activity -----------------------------------------------------------------


def activity_rows(
    backends: Backends,
    token: str | None,
    database_name: str,
    role_oids: Mapping[str, int],
) -> list[dict[str, Any]]:
    caller = backends.caller(token)
    rows = []
    for b in backends.all():
        if not _listed(caller, b):
            continue
        row = dict(_EMPTY_ROW)
        app = b.settings.values.get("application_name", "") if b.settings is not None else ""
        row.update(
            datid=b.datid or DATID,
            datname=b.database or database_name,
            pid=b.pid,
            usesysid=role_oids.get(b.user),
            usename=b.user,
            application_name=_clip(app, NAME_BYTES),
        )
        if not _may_see(caller, b):
            # Postgres shows only these columns of other roles' sessions.
            row["query"] = "<insufficient privilege>"
            rows.append(row)
            continue
        state, query, query_start, state_change, xact_start = b.activity.now
        row.update(
            client_addr=b.client_addr,
            client_port=b.client_port,
            backend_start=_ts(b.backend_start),
            xact_start=_ts(xact_start),
            query_start=_ts(query_start),
            state_change=_ts(state_change),
            state=state,
            query=_clip(query, QUERY_BYTES),
            backend_type="client backend",
        )
        rows.append(row)
    return rows


def _listed(caller: Backend | None, b: Backend) -> bool:
    """Whether `caller` learns that session `b` exists at all: an organisation is the
    boundary of every key (PostgreSQL lists every session of the database), so a key's
    session lists only its own organisation's; superusers list every one. Calls without a
    wire session (MCP, REST) list none: who asks cannot be proven there."""
    if caller is None:
        return False
    return caller.superuser or caller.org_id == b.org_id


def _may_see(caller: Backend | None, b: Backend) -> bool:
    """Postgres' HAS_PGSTAT_PERMISSIONS: a superuser, or the same role."""
    return caller is not None and (caller.superuser or caller.same_role(b))


def progress_rows(backends: Backends, token: str | None, database_name: str) -> list[dict]:
    """The COPY commands running now, a row each (pg_stat_progress_copy). Of other roles'
    sessions only pid and the database, as Postgres' pg_stat_get_progress_info."""
    caller = backends.caller(token)
    rows = []
    for b in backends.all():
        p = b.activity.progress
        if p is None or not _listed(caller, b):
            continue
        row: dict[str, Any] = dict.fromkeys(name for name, _ in PROGRESS_COLUMNS)
        row.update(pid=b.pid, datid=b.datid or DATID, datname=b.database or database_name)
        if _may_see(caller, b):
            done_bytes, done_tuples = p.counts
            row.update(
                relation=p.relation,
                command=p.command,
                type="PIPE",  # STDIN / STDOUT: server files go to DuckDB directly
                bytes_processed=done_bytes,
                bytes_total=0,  # a pipe's size is not known, as in Postgres
                tuples_processed=done_tuples,
                tuples_excluded=0,  # COPY FROM ... WHERE is not supported
            )
        rows.append(row)
    return rows


def _ts(t: float | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, UTC)


def _clip(text: str, limit: int) -> str:
    """At most `limit` UTF-8 bytes, cut at a character boundary (pg_mbcliplen)."""
    if len(text) * 4 <= limit:
        return text
    raw = text.encode("utf-8", "surrogatepass")
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", "ignore")


# --- pg_cancel_backend / pg_terminate_backend ---------------------------------------------


def signal_backend(
    backends: Backends,
    token: str | None,
    pid: int | None,
    kind: str,
    timeout_ms: int | None,
) -> bool | None:
    """Postgres' pg_signal_backend: kind 'cancel' (SIGINT) or 'terminate' (SIGTERM)."""
    if kind not in _NOT_MEMBER:
        raise UdfError("22023", f"unknown backend signal {kind!r}")
    if pid is None or timeout_ms is None:
        return None  # the Postgres functions are strict
    if timeout_ms < 0:
        raise UdfError("22003", '"timeout" must not be negative')
    caller = backends.caller(token)
    target = backends.get(pid)
    if target is None or not _listed(caller, target):  # another organisation's: unseen
        _warn(caller, f"PID {pid} is not a PostgreSQL backend process")
        return False
    privileged = caller is not None and caller.superuser
    if target.superuser and not privileged:
        raise UdfError("42501", _NOT_SUPERUSER[kind])
    if not privileged and not (caller is not None and caller.same_role(target)):
        raise UdfError("42501", _NOT_MEMBER[kind])
    if kind == "cancel":
        target.runner.interrupt("cancel")  # what a CancelRequest does
    elif target.terminate is not None:
        target.terminate()
    if target is caller:
        # Signalling oneself: the running statement (this one) ends now, as in Postgres;
        # after a terminate the runner reports this 57014 as FATAL 57P01.
        raise UdfError("57014", "canceling statement due to user request")
    if kind == "terminate" and timeout_ms > 0 and not backends.wait_gone(target, timeout_ms / 1000):
        _warn(caller, f"backend with PID {pid} did not terminate within {timeout_ms} milliseconds")
        return False
    return True


def _warn(caller: Backend | None, message: str) -> None:
    if caller is not None and caller.notice is not None:
        with _notice_lock:
            caller.notice(message, "01000", "WARNING")
