"""The commit clock's counting cursor: main-loop work counts as a write (and so refuses
wire sessions' savepoint replays) exactly when it may write, never for plain reads."""

from __future__ import annotations

import duckdb
import pytest

from proxy.db.commit_clock import CLOCK, CountingCursor


@pytest.fixture
def cur() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id INTEGER, v VARCHAR)")
    con.execute("CREATE SEQUENCE s")
    return con


def counted(cur: duckdb.DuckDBPyConnection, *statements: str) -> bool:
    """Run the statements through a CountingCursor: did the clock count them?"""
    begun, finished = CLOCK.begun, CLOCK.finished
    counting = CountingCursor(cur)
    try:
        for sql in statements:
            counting.execute(sql).fetchall()
    finally:
        counting.settle()
    assert CLOCK.begun - begun == CLOCK.finished - finished  # every begin() ended
    return CLOCK.begun > begun


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM t",
        "  with x AS (SELECT 1) SELECT * FROM x;",
        "(SELECT 1) UNION ALL (SELECT 2)",
        "FROM t",
        "DESCRIBE t",
        "SHOW TABLES",
    ],
)
def test_reads_do_not_count(cur, sql: str) -> None:
    assert not counted(cur, sql)


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (1, 'a')",
        "UPDATE t SET v = 'b'",
        "DELETE FROM t",
        "CREATE TABLE u AS SELECT 1",
        "SELECT nextval('s')",  # a sequence moves and commits
        "SELECT 1; DELETE FROM t",
        "/* first */ SELECT 1",  # not judged: counted
        "CHECKPOINT",
    ],
)
def test_what_may_write_counts(cur, sql: str) -> None:
    assert counted(cur, sql)


def test_counting_starts_at_the_first_write_and_ends_once(cur) -> None:
    begun = CLOCK.begun
    counting = CountingCursor(cur)
    counting.execute("SELECT count(*) FROM t").fetchone()
    assert CLOCK.begun == begun and not counting.counting
    counting.begin()
    counting.execute("INSERT INTO t VALUES (?, ?)", [2, "x"])
    assert CLOCK.begun == begun + 1 and counting.counting
    counting.execute("INSERT INTO t VALUES (3, 'y')")  # still one count
    counting.commit()
    finished = CLOCK.finished
    counting.settle()
    counting.settle()
    assert CLOCK.begun == begun + 1 and CLOCK.finished == finished + 1
    assert cur.execute("SELECT count(*) FROM t").fetchone() == (2,)


def test_calls_it_cannot_judge_count(cur) -> None:
    """A relation (cur.sql / cur.table ...) can write later: counted from the start."""
    begun = CLOCK.begun
    counting = CountingCursor(cur)
    counting.table("t")
    assert counting.counting and CLOCK.begun == begun + 1
    counting.settle()
