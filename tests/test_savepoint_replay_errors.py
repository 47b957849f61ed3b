"""ROLLBACK TO SAVEPOINT when the replay itself goes wrong (it should not): the block ends
up failed with a clear error, never half-replayed and reported as a success.

Neither case can be caused on purpose through a client (a replay fails only on a race),
so these drive proxy/pgserver/savepoints.py directly over a real DuckDB connection, with the
runner reduced to what the savepoint code uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import duckdb
import pytest

from proxy.db.commit_clock import CLOCK, OpenWrite
from proxy.db.duckdb_errors import map_duckdb_error
from proxy.db.settings import SessionSettings
from proxy.pgserver import savepoints
from proxy.pgserver.savepoint_log import SavepointState
from proxy.wire.errors import PgError
from transpiler import transpile
from transpiler.model import TransactionCommand


class Runner:
    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self.cursor = cur
        self.settings = SessionSettings({"user": "tester"})
        self.txn_status = "I"
        self.implicit = False
        self.write = OpenWrite()
        self.during_call: Callable[[], None] | None = None

    async def call(self, fn: Callable[..., Any], *args: Any, sql: str | None = None) -> Any:
        try:
            out = fn(*args)
        except duckdb.Error as exc:
            raise map_duckdb_error(exc, sql) from None
        if self.during_call is not None:
            self.during_call()
        return out

    async def take_cursor(self) -> None:
        pass


class Session:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.settings = runner.settings
        self.savepoints = SavepointState()


def _block(sql_before: str) -> tuple[Runner, Session]:
    """BEGIN; <sql_before> (recorded); SAVEPOINT a; a failing statement."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    runner = Runner(con.cursor())
    session = Session(runner)
    savepoints.begin(runner, session.savepoints)
    runner.cursor.begin()
    runner.txn_status = "T"
    (st,) = transpile(sql_before)
    savepoints.note_statement(session.savepoints, runner, st)  # type: ignore[arg-type]
    runner.cursor.execute(st.sql)
    savepoints.record(session.savepoints, session.settings.values, st, st.sql, None, None)
    asyncio.run(_cmd(runner, session, "savepoint"))
    with pytest.raises(duckdb.ConstraintException):
        runner.cursor.execute("INSERT INTO t VALUES (1)")
    runner.txn_status = "E"
    return runner, session


async def _cmd(runner: Runner, session: Session, action: str) -> str:
    cmd = TransactionCommand(action, "", "a")  # type: ignore[arg-type]
    return await savepoints.run(runner, session.savepoints, cmd)  # type: ignore[arg-type]


def test_a_statement_that_fails_on_replay_fails_the_block() -> None:
    runner, session = _block("INSERT INTO t VALUES (1)")
    # What was recorded can no longer run (a stand-in for any replay error).
    session.savepoints.records[0].sql = "INSERT INTO t_gone VALUES (1)"
    with pytest.raises(PgError) as exc:
        asyncio.run(_cmd(runner, session, "rollback_to"))
    assert exc.value.sqlstate == "40001"
    assert "could not replay the transaction's earlier writes" in exc.value.message
    assert "t_gone" in exc.value.message
    assert runner.txn_status == "E"
    with pytest.raises(PgError) as again:  # no second attempt on a half-replayed block
        asyncio.run(_cmd(runner, session, "rollback_to"))
    assert again.value.sqlstate == "25P02"
    runner.cursor.rollback()
    assert runner.cursor.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_a_write_committed_during_the_replay_fails_the_block() -> None:
    runner, session = _block("INSERT INTO t VALUES (1)")

    def other_session_commits() -> None:  # lands while the replay runs
        runner.during_call = None
        with CLOCK.writing():
            pass

    runner.during_call = other_session_commits
    with pytest.raises(PgError) as exc:
        asyncio.run(_cmd(runner, session, "rollback_to"))
    assert exc.value.sqlstate == "40001"
    assert "another transaction committed a write" in exc.value.message
    assert runner.txn_status == "E"
    with pytest.raises(PgError) as again:
        asyncio.run(_cmd(runner, session, "rollback_to"))
    assert again.value.sqlstate == "25P02"


def test_the_same_block_replays_when_nothing_goes_wrong() -> None:
    runner, session = _block("INSERT INTO t VALUES (1)")
    assert asyncio.run(_cmd(runner, session, "rollback_to")) == "ROLLBACK"
    assert runner.txn_status == "T"
    assert runner.cursor.execute("SELECT id FROM t").fetchall() == [(1,)]
