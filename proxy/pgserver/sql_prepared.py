"""SQL-level PREPARE / EXECUTE / DEALLOCATE of a session (pg_dump prepares its per-object
catalog queries this way). The statement is kept as text and, at EXECUTE, bound with its
arguments (transpiler/sql_prepare.py) and run as any other statement."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from proxy.wire.errors import PgError
from transpiler.sql_prepare import bind_text, max_param, parse_execute, parse_prepare

# name -> (declared types, statement text)
SqlPrepared = dict[str, tuple[list[str], str]]

# What PostgreSQL's grammar lets PREPARE hold (PreparableStmt): queries and DML, no DDL.
_PREPARABLE = ("SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "VALUES", "WITH", "TABLE", "(")


def maybe_prepared(sql: str) -> bool:
    head = sql.lstrip()[:7].upper()
    return head in ("PREPARE", "EXECUTE")


def prepare(store: SqlPrepared, sql: str, check: Callable[[str], object]) -> bool:
    """Keep a PREPARE's statement; False when `sql` is no PREPARE this module reads.
    `check(statement)` reads it first as the session would run it (the caller's policy:
    what a key may not run it may not prepare either)."""
    parsed = parse_prepare(sql)
    if parsed is None:
        return False
    name, types, body = parsed
    head = body.lstrip()
    word = head[:1] if head.startswith("(") else head.split(None, 1)[0].upper() if head else ""
    if word not in _PREPARABLE:
        raise PgError(
            "42601", f'syntax error at or near "{head.split(None, 1)[0] if head else ""}"'
        )
    check(body)
    if name in store:
        raise PgError("42P05", f'prepared statement "{name}" already exists')
    store[name] = (types, body)
    return True


def execute_text(store: SqlPrepared, sql: str) -> str | None:
    """The statement an EXECUTE runs, its arguments bound; None when `sql` is no EXECUTE."""
    parsed = parse_execute(sql)
    if parsed is None:
        return None
    name, args = parsed
    if name not in store:
        raise PgError("26000", f'prepared statement "{name}" does not exist')
    types, body = store[name]
    wanted = max(len(types), max_param(body))
    if len(args) != wanted:
        raise PgError(
            "42601",
            f'wrong number of parameters for prepared statement "{name}"',
            detail=f"Expected {wanted} parameters but got {len(args)}.",
        )
    return bind_text(body, types, args)


def extended_text(store: SqlPrepared, sql: str) -> str:
    """What a Parse of PREPARE / EXECUTE runs: EXECUTE's bound statement; a PREPARE is
    refused (it is kept when it runs, which Parse does not do)."""
    if parse_prepare(sql) is not None:
        raise PgError(
            "0A000",
            "PREPARE through the extended query protocol is not supported",
            hint="Send PREPARE as a simple query, or Parse the statement itself.",
        )
    return execute_text(store, sql) or sql


@contextmanager
def piece_of(start: int, text: str) -> Iterator[None]:
    """Run one statement of a message of several (transpiler.sql_prepare.message_pieces):
    an error's position counts from the message's start, as PostgreSQL's does; within an
    EXECUTE's prepared statement it is dropped (it points into that statement's text)."""
    try:
        yield
    except PgError as exc:
        if exc.position is not None:
            exc.position = None if parse_execute(text) else exc.position + start
        raise
