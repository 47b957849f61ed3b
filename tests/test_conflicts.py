"""proxy/db/conflicts.py: a transaction that loses a write-write conflict in DuckDB runs
again and commits on what the winner wrote; one that keeps losing fails with the
conflict after the given number of runs (what the ledger, state, triggers and the
agent lake's writers rely on instead of losing the write)."""

from __future__ import annotations

import asyncio

import duckdb
import pytest

from proxy.db.conflicts import CONFLICT_OR_DUPLICATE, again_on_conflict, again_on_conflict_async


class Counter:
    """One row, taken by an open transaction (the winner); `add_ten` is a transaction
    that conflicts with it until the winner commits (after the first failed run, if
    `winner_commits`)."""

    def __init__(self, winner_commits: bool) -> None:
        self.db = duckdb.connect()
        self.db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
        self.db.execute("INSERT INTO t VALUES (1, 0)")
        self.winner = self.db.cursor()
        self.winner.begin()
        self.winner.execute("UPDATE t SET n = n + 1 WHERE id = 1")
        self.winner_commits = winner_commits
        self.runs = 0

    def add_ten(self) -> str:
        self.runs += 1
        cur = self.db.cursor()
        cur.begin()
        try:
            cur.execute("UPDATE t SET n = n + 10 WHERE id = 1")
            cur.commit()
        except duckdb.TransactionException:
            cur.rollback()
            if self.winner_commits and self.runs == 1:
                self.winner.commit()
            raise
        return "done"

    def n(self) -> int:
        return self.db.execute("SELECT n FROM t").fetchone()[0]


def test_the_loser_of_a_conflict_runs_again_and_both_writes_stay() -> None:
    c = Counter(winner_commits=True)
    retried: list[int] = []
    assert again_on_conflict(c.add_ten, attempts=3, on_retry=lambda: retried.append(1)) == "done"
    assert c.runs == 2 and len(retried) == 1
    assert c.n() == 11


def test_a_conflict_that_never_clears_fails_after_the_given_runs() -> None:
    c = Counter(winner_commits=False)
    with pytest.raises(duckdb.TransactionException):
        again_on_conflict(c.add_ten, attempts=3, step=0.001)
    assert c.runs == 3
    c.winner.commit()
    assert c.n() == 1


def test_the_async_form_retries_duplicates_when_asked_and_nothing_else() -> None:
    db = duckdb.connect()
    db.execute("CREATE TABLE k (key VARCHAR PRIMARY KEY)")
    db.execute("INSERT INTO k VALUES ('a')")
    runs: list[str] = []

    async def insert(key: str) -> None:
        runs.append(key)
        db.execute("INSERT INTO k VALUES (?)", [key])

    async def first_dup_then_new() -> None:
        await insert("a" if not runs else "b")

    asyncio.run(
        again_on_conflict_async(first_dup_then_new, attempts=2, errors=CONFLICT_OR_DUPLICATE)
    )
    assert runs == ["a", "b"]
    runs.clear()
    with pytest.raises(duckdb.ConstraintException):  # not a conflict by default: no rerun
        asyncio.run(again_on_conflict_async(lambda: insert("a"), attempts=5))
    assert runs == ["a"]
