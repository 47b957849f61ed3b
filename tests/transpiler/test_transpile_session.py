"""Session statements: SET / RESET / SHOW / transaction control / utilities."""

from __future__ import annotations

import pytest

from transpiler import (
    ResetCommand,
    SetCommand,
    ShowCommand,
    TransactionCommand,
    TranspileError,
    UtilityCommand,
    transpile,
)
from transpiler.notify_statements import NotifyStatement


def one(sql: str):
    (stmt,) = transpile(sql)
    return stmt


@pytest.mark.parametrize(
    ("sql", "command"),
    [
        ("SET x = 5", SetCommand("x", "5", False)),
        ("SET x TO 'a''b'", SetCommand("x", "a'b", False)),
        ("SET SESSION app.x = 'v'", SetCommand("app.x", "v", False)),
        ('SET LOCAL search_path TO a, "B"', SetCommand("search_path", "a, B", True)),
        ("SET TIME ZONE 'UTC'", SetCommand("timezone", "UTC", False)),
        ("SET TIME ZONE LOCAL", SetCommand("timezone", None, False)),
        ("SET TIME ZONE INTERVAL '-07:00' HOUR TO MINUTE", SetCommand("timezone", "-7", False)),
        ("SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE", SetCommand("timezone", "5.5", False)),
        ("SET NAMES 'utf-8'", SetCommand("client_encoding", "utf-8", False)),
        ("SET client_encoding = 'utf-8'", SetCommand("client_encoding", "utf-8", False)),
        ("SET x = DEFAULT", SetCommand("x", None, False)),
        ("SET extra_float_digits = -3", SetCommand("extra_float_digits", "-3", False)),
        ("SET hatidata_request_id = ''", SetCommand("hatidata_request_id", "", False)),
        ("SET Hatidata.Dialect = 'snowflake'", SetCommand("hatidata.dialect", "snowflake", False)),
        (
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED",
            SetCommand("transaction_characteristics", "isolation level read committed", False),
        ),
    ],
)
def test_set(sql: str, command: SetCommand) -> None:
    stmt = one(sql)
    assert (stmt.kind, stmt.tag, stmt.command) == ("set", "SET", command)


def test_unreadable_set_goes_to_duckdb() -> None:
    stmt = one("SET VARIABLE x = 1")
    assert stmt.kind == "set" and stmt.command is None and stmt.sql == "SET VARIABLE x = 1"


def test_reset_and_show() -> None:
    assert one("RESET ALL").command == ResetCommand(None)
    assert one("reset hatidata_request_id").command == ResetCommand("hatidata_request_id")
    assert one("SHOW ALL").command == ShowCommand("all")
    assert one("SHOW TimeZone").command == ShowCommand("timezone")
    assert one("SHOW TIME ZONE").command == ShowCommand("timezone")
    assert one("SHOW transaction isolation level").command == ShowCommand("transaction_isolation")


@pytest.mark.parametrize(
    ("sql", "kind", "tag", "command"),
    [
        ("BEGIN", "begin", "BEGIN", TransactionCommand("begin")),
        ("begin work", "begin", "BEGIN", TransactionCommand("begin")),
        (
            "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY",
            "begin",
            "BEGIN",
            TransactionCommand("begin", "isolation level serializable read only"),
        ),
        ("START TRANSACTION", "begin", "START TRANSACTION", TransactionCommand("begin")),
        ("COMMIT", "commit", "COMMIT", TransactionCommand("commit")),
        ("END", "commit", "COMMIT", TransactionCommand("commit")),
        ("ROLLBACK", "rollback", "ROLLBACK", TransactionCommand("rollback")),
        ("ABORT", "rollback", "ROLLBACK", TransactionCommand("rollback")),
        ("SAVEPOINT s1", "savepoint", "SAVEPOINT", TransactionCommand("savepoint", "", "s1")),
        ("RELEASE SAVEPOINT s1", "savepoint", "RELEASE", TransactionCommand("release", "", "s1")),
        (
            "ROLLBACK TO SAVEPOINT s1",
            "savepoint",
            "ROLLBACK",
            TransactionCommand("rollback_to", "", "s1"),
        ),
    ],
)
def test_transactions(sql: str, kind: str, tag: str, command: TransactionCommand) -> None:
    stmt = one(sql)
    assert (stmt.kind, stmt.tag, stmt.command) == (kind, tag, command)


@pytest.mark.parametrize(
    ("sql", "tag", "name"),
    [
        ("DISCARD ALL", "DISCARD ALL", "discard all"),
        ("CLOSE ALL", "CLOSE CURSOR ALL", "close all"),
        ("DEALLOCATE ALL", "DEALLOCATE ALL", "deallocate all"),
        ("DEALLOCATE PREPARE __asyncpg_stmt_1__", "DEALLOCATE", "deallocate __asyncpg_stmt_1__"),
        ("CREATE EXTENSION vector", "CREATE EXTENSION", "create extension vector"),
        ("create extension if not exists Vector", "CREATE EXTENSION", "create extension vector"),
        (
            'CREATE EXTENSION IF NOT EXISTS "uuid-ossp" WITH SCHEMA public CASCADE',
            "CREATE EXTENSION",
            "create extension uuid-ossp",
        ),
        ("LOCK TABLE public.items IN ACCESS SHARE MODE", "LOCK TABLE", "lock public.items"),
        ('lock only "Foo", b.c * nowait', "LOCK TABLE", 'lock "Foo", b.c'),
        ("LOCK items", "LOCK TABLE", "lock items"),
    ],
)
def test_utilities(sql: str, tag: str, name: str) -> None:
    stmt = one(sql)
    assert (stmt.kind, stmt.tag, stmt.command) == ("utility", tag, UtilityCommand(name))


@pytest.mark.parametrize(
    ("sql", "verb", "channel", "payload"),
    [
        ("LISTEN jobs", "LISTEN", "jobs", ""),
        ('LISTEN "Jobs"', "LISTEN", "Jobs", ""),
        ("UNLISTEN Jobs", "UNLISTEN", "jobs", ""),
        ("UNLISTEN *", "UNLISTEN", None, ""),
        ("NOTIFY jobs, 'x'", "NOTIFY", "jobs", "x"),
    ],
)
def test_listen_notify_are_server_commands(
    sql: str, verb: str, channel: str | None, payload: str
) -> None:
    """The server's hub applies them (proxy/pgserver/notify_wire.py)."""
    stmt = one(sql)
    assert (stmt.kind, stmt.tag) == ("utility", verb)
    assert stmt.command == NotifyStatement(verb, channel, payload)


@pytest.mark.parametrize("sql", ["NOTIFY jobs 'x'", "LISTEN 'jobs'", "NOTIFY jobs, x"])
def test_malformed_listen_notify_are_syntax_errors(sql: str) -> None:
    with pytest.raises(TranspileError) as info:
        transpile(sql)
    assert info.value.sqlstate == "42601"


def test_pg_notify_calls_the_session_function() -> None:
    assert "__hati_pg_notify(" in one("SELECT pg_notify('jobs', x::TEXT) FROM t").sql.lower()
    assert "__hati_pg_notify(" in one("select pg_catalog.pg_notify($1, $2)").sql.lower()


def test_pg_notify_in_a_string_is_text() -> None:
    assert one("SELECT 'pg_notify(x)' AS s").tag == "SELECT"


def test_other_create_statements_are_not_session_commands() -> None:
    assert one("CREATE TABLE extension (id int)").command is None
    assert one("CREATE SEQUENCE extension").command is None


def test_asyncpg_reset_query_is_four_statements() -> None:
    stmts = transpile("SELECT pg_advisory_unlock_all();\nCLOSE ALL;\nUNLISTEN *;\nRESET ALL;")
    assert [s.kind for s in stmts] == ["select", "utility", "utility", "reset"]
    assert stmts[0].sql == "SELECT __HATI_PG_ADVISORY_UNLOCK_ALL()"
