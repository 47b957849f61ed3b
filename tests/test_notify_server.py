"""LISTEN / NOTIFY / pg_notify() over the wire (proxy/pgserver/notify_wire.py): two
connections of one server, PostgreSQL's delivery rules (at COMMIT, nothing on ROLLBACK,
savepoints, dedup within a transaction, self-notify, an in-transaction listener gets it
after its block), psycopg's conn.notifies() and asyncpg's add_listener waiting on the
socket of an idle connection."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import asyncpg
import psycopg
import pytest

from tests.conftest import ServerProcess


@pytest.fixture
def pair(server: ServerProcess) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with (
        psycopg.connect(server.dsn, autocommit=True) as listener,
        psycopg.connect(server.dsn, autocommit=True) as notifier,
    ):
        yield listener, notifier


def _drain(con: psycopg.Connection, timeout: float = 0.5) -> list[tuple[str, str, int]]:
    """What `con` receives within `timeout` s while it is idle (no query sent)."""
    return [(n.channel, n.payload, n.pid) for n in con.notifies(timeout=timeout)]


def test_commit_rollback_savepoint_dedup(pair: tuple[psycopg.Connection, ...]) -> None:
    listener, notifier = pair
    listener.execute("LISTEN nt_jobs")
    pid = notifier.info.backend_pid
    notifier.execute("NOTIFY nt_jobs, 'autocommit'")
    with notifier.transaction():
        notifier.execute("NOTIFY nt_jobs, 'a'")
        notifier.execute("NOTIFY nt_jobs, 'b'")
        notifier.execute("NOTIFY nt_jobs, 'a'")  # the same pair again: delivered once
        notifier.execute("NOTIFY nt_other, 'not listened'")
    with pytest.raises(ZeroDivisionError), notifier.transaction():
        notifier.execute("NOTIFY nt_jobs, 'rolled back'")
        raise ZeroDivisionError
    notifier.execute("BEGIN")
    notifier.execute("NOTIFY nt_jobs, 'before savepoint'")
    notifier.execute("SAVEPOINT s1")
    notifier.execute("NOTIFY nt_jobs, 'after savepoint'")
    notifier.execute("ROLLBACK TO SAVEPOINT s1")
    notifier.execute("NOTIFY nt_jobs, 'after rollback to'")
    notifier.execute("COMMIT")
    notifier.execute("BEGIN")
    notifier.execute("NOTIFY nt_jobs, 'in a failed block'")
    with pytest.raises(psycopg.errors.DivisionByZero):
        notifier.execute("SELECT 1/0")
    notifier.execute("COMMIT")  # answered ROLLBACK
    assert _drain(listener) == [
        ("nt_jobs", "autocommit", pid),
        ("nt_jobs", "a", pid),
        ("nt_jobs", "b", pid),
        ("nt_jobs", "before savepoint", pid),
        ("nt_jobs", "after rollback to", pid),
    ]


def test_pg_notify_per_row_with_parameters(pair: tuple[psycopg.Connection, ...]) -> None:
    listener, notifier = pair
    listener.execute("LISTEN nt_rows")
    notifier.execute("CREATE TEMP TABLE nt_src AS SELECT * FROM (VALUES (1), (2), (3)) v(x)")
    rows = notifier.execute("SELECT pg_notify('nt_rows', x::text) FROM nt_src ORDER BY x")
    assert rows.fetchall() == [("",)] * 3  # void prints as an empty value
    notifier.execute("SELECT pg_notify(%s, %s)", ("nt_rows", "param"))
    notifier.execute("SELECT pg_notify('nt_rows', NULL)")  # NULL payload: empty
    got = sorted(p for _, p, _ in _drain(listener))
    assert got == ["", "1", "2", "3", "param"]


def test_self_notify_and_listen_in_a_transaction(pair: tuple[psycopg.Connection, ...]) -> None:
    listener, notifier = pair
    pid = listener.info.backend_pid
    listener.execute("BEGIN")
    listener.execute("LISTEN nt_self")
    notifier.execute("NOTIFY nt_self, 'before commit'")  # LISTEN not yet in effect
    listener.execute("NOTIFY nt_self, 'own'")
    listener.execute("COMMIT")  # the listener registers first: it gets its own
    assert _drain(listener) == [("nt_self", "own", pid)]
    assert listener.execute("SELECT pg_listening_channels()").fetchall() == [("nt_self",)]
    listener.execute("UNLISTEN nt_self")
    notifier.execute("NOTIFY nt_self, 'after unlisten'")
    assert _drain(listener) == []
    assert listener.execute("SELECT pg_listening_channels()").fetchall() == []


def test_a_listener_in_a_block_gets_it_after_its_commit(
    pair: tuple[psycopg.Connection, ...],
) -> None:
    listener, notifier = pair
    listener.execute("LISTEN nt_later")
    listener.execute("BEGIN")
    listener.execute("SELECT 1")
    notifier.execute("NOTIFY nt_later, 'x'")
    assert _drain(listener, 0.3) == []  # inside its transaction: not yet
    listener.execute("COMMIT")  # delivered with the COMMIT's answer
    assert [(n.channel, n.payload) for n in listener.notifies(timeout=0.5)] == [("nt_later", "x")]


def test_idle_listener_is_woken_without_a_query(pair: tuple[psycopg.Connection, ...]) -> None:
    listener, notifier = pair
    listener.execute('LISTEN "Nt Quoted"')
    listener.execute("LISTEN nt_FOLDED")  # folded to lower case
    later = threading.Timer(0.3, lambda: notifier.execute("NOTIFY nt_folded, 'woken'"))
    later.start()
    started = time.monotonic()
    got = next(iter(listener.notifies(timeout=5)))
    assert (got.channel, got.payload) == ("nt_folded", "woken")
    assert time.monotonic() - started < 3
    notifier.execute("""NOTIFY "Nt Quoted", 'q'""")
    assert [(c, p) for c, p, _ in _drain(listener)] == [("Nt Quoted", "q")]
    later.join()


def test_errors(pair: tuple[psycopg.Connection, ...]) -> None:
    _, notifier = pair
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="payload string too long"):
        notifier.execute("NOTIFY nt_e, '" + "x" * 8000 + "'")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="payload string too long"):
        notifier.execute("SELECT pg_notify('nt_e', repeat('x', 8000))")
    notifier.execute("SELECT pg_notify('nt_e', repeat('x', 7999))")  # the limit itself
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="channel name cannot be empty"):
        notifier.execute("SELECT pg_notify('', 'x')")
    with pytest.raises(psycopg.errors.SyntaxError):
        notifier.execute("NOTIFY nt_e 'no comma'")


def test_asyncpg_add_listener(server: ServerProcess) -> None:
    async def main() -> list[tuple[int, str, str]]:
        where = {"host": server.host, "port": server.port, "user": "tester"}
        listener = await asyncpg.connect(**where, database="hatidata")
        notifier = await asyncpg.connect(**where, database="hatidata")
        got: list[tuple[int, str, str]] = []
        arrived = asyncio.Event()

        def on(_con: object, pid: int, channel: str, payload: str) -> None:
            got.append((pid, channel, payload))
            arrived.set()

        await listener.add_listener("nt_async", on)
        await notifier.execute("SELECT pg_notify($1, $2)", "nt_async", "hello")
        await asyncio.wait_for(arrived.wait(), 5)
        pid = notifier.get_server_pid()
        await listener.close()
        await notifier.close()
        return [(p - pid, c, x) for p, c, x in got]

    assert asyncio.run(main()) == [(0, "nt_async", "hello")]


def test_discard_all_unlistens_and_a_listener_can_be_terminated(
    pair: tuple[psycopg.Connection, ...],
) -> None:
    listener, notifier = pair
    listener.execute("LISTEN nt_discard")
    listener.execute("DISCARD ALL")
    assert listener.execute("SELECT pg_listening_channels()").fetchall() == []
    listener.execute("LISTEN nt_discard")
    notifier.execute("SELECT pg_terminate_backend(%s)", (listener.info.backend_pid,))
    with pytest.raises(psycopg.OperationalError):
        for _ in listener.notifies(timeout=2):
            pass
        listener.execute("SELECT 1")
    notifier.execute("NOTIFY nt_discard, 'nobody left'")  # the notifier is unaffected
    assert notifier.execute("SELECT 1").fetchone() == (1,)
