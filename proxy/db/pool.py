"""Pooled DuckDB cursors for the server's own work.

Two pools: one on the agent database (agent layer, keys, usage: proxy/db/agent_db.py),
and one on the users' database for the agent work that touches users' tables (branches).
Every call runs on the engine's worker threads, so it never blocks the event loop and
never touches a client session's cursor (or its transaction): a write commits on its
own, at once.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import TypeVar

import duckdb

from proxy.core.errors import AgentError
from proxy.db.change_clock import clock_for
from proxy.db.commit_clock import CountingCursor
from proxy.db.engine import Engine

T = TypeVar("T")
C = TypeVar("C")  # a cursor


class PooledDB:
    """Pooled DuckDB cursors on one of the server's databases, used on the engine's worker
    threads. `db`: the database (default: the users'); `counted`: whether writes count on
    the commit clock (they must on the users' database, where wire sessions replay
    savepoints; the agent database is no concern of a client's transaction)."""

    def __init__(
        self,
        engine: Engine,
        size: int = 4,
        *,
        db: duckdb.DuckDBPyConnection | None = None,
        counted: bool = True,
    ) -> None:
        self.engine = engine
        self.counted = counted
        self._pool: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
        self._size = size
        self._closed = False
        target = engine.db if db is None else db
        self.changes = clock_for(target)  # moved by every call that may write
        for _ in range(size):
            self._pool.put(target.cursor())

    def _borrow(self) -> duckdb.DuckDBPyConnection:
        # Poll rather than block forever: after close() no cursor comes back.
        while not self._closed:
            try:
                return self._pool.get(timeout=0.5)
            except queue.Empty:
                continue
        raise AgentError.unavailable("the server is shutting down")

    def _with_cursor(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        self.changes.begin()
        try:
            return self._on_cursor(fn)
        finally:
            self.changes.end()

    def _on_cursor(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        cur = self._borrow()
        if not self.counted:
            try:
                return fn(cur)
            finally:
                self._pool.put(cur)
        # Counts on the commit clock from its first write on: reads never make a wire
        # session's ROLLBACK TO SAVEPOINT refuse its replay (proxy/db/commit_clock.py).
        counting = CountingCursor(cur)
        try:
            return fn(counting)  # type: ignore[arg-type]
        finally:
            counting.settle()
            self._pool.put(cur)

    async def run(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run fn(cursor) on a worker thread, in autocommit mode (each statement commits)."""
        return await self.engine.run_uncounted(self._with_cursor, fn)

    async def read(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Like run, for fn that only reads: the change clock stays where it is."""
        return await self.engine.run_uncounted(self._on_cursor, fn)

    async def transaction(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run fn(cursor) on a worker thread inside one transaction: all of it or nothing."""
        return await self.engine.run_uncounted(self._with_cursor, in_transaction(fn))

    def run_sync(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """For start-up and shutdown code that is already off the event loop."""
        return self._with_cursor(fn)

    def close(self, timeout: float = 10.0) -> None:
        """Close every cursor, waiting up to `timeout` for those still lent out."""
        self._closed = True
        for _ in range(self._size):
            try:
                self._pool.get(timeout=timeout).close()
            except queue.Empty:
                break


def in_transaction(fn: Callable[[C], T]) -> Callable[[C], T]:
    """fn(cursor) inside one transaction of that cursor (anything with begin / commit /
    rollback): all of it or nothing."""

    def run(cur: C) -> T:
        cur.begin()  # type: ignore[attr-defined]
        try:
            out = fn(cur)
        except BaseException:
            cur.rollback()  # type: ignore[attr-defined]
            raise
        cur.commit()  # type: ignore[attr-defined]
        return out

    return run
