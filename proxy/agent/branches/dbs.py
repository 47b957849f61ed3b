"""Branch work spans both databases: the branch schemas and main's tables are in the
users' database, the branch metadata and audit trail in the agent's (proxy/db/agent_db.py).

`BranchCursor` is the one cursor the branch code works through: SQL naming the internal
schema (`hatidata_internal.branches`, `.branch_audit`, the trigger tables) runs on the
agent database, everything else on the users'. Statements a client wrote (branch_query)
never go through the routing: they run with `on_users`. A transaction spans both:
begun on both, committed on the users' database first, then on the agent's (a crash in
between can only leave metadata one step behind the branch's tables, never a branch
recorded that does not exist).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from proxy.core.names import INTERNAL_SCHEMA
from proxy.db.pool import in_transaction

if TYPE_CHECKING:
    from proxy.db.pool import PooledDB

T = TypeVar("T")
_INTERNAL = INTERNAL_SCHEMA + "."


class BranchCursor:
    def __init__(self, users: Any, agent: Any) -> None:
        self.users = users
        self.agent = agent
        self._last = users  # whose results fetch* / description read

    def _target(self, sql: str) -> Any:
        return self.agent if _INTERNAL in sql else self.users

    def execute(self, sql: str, parameters: Any = None) -> BranchCursor:
        self._last = self._target(sql)
        self._last.execute(sql) if parameters is None else self._last.execute(sql, parameters)
        return self

    def executemany(self, sql: str, parameters: Any) -> BranchCursor:
        self._last = self._target(sql)
        self._last.executemany(sql, parameters)
        return self

    def on_users(self, sql: str) -> BranchCursor:
        """Client SQL: always on the users' database, whatever its text names."""
        self._last = self.users
        self.users.execute(sql)
        return self

    def begin(self) -> None:
        self.users.begin()
        try:
            self.agent.begin()
        except BaseException:
            self.users.rollback()
            raise

    def commit(self) -> None:
        try:
            self.users.commit()
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                self.agent.rollback()
            raise
        self.agent.commit()

    def rollback(self) -> None:
        try:
            self.users.rollback()
        finally:
            with contextlib.suppress(duckdb.Error):
                self.agent.rollback()

    def __getattr__(self, name: str) -> Any:  # fetchone, fetchall, description, ...
        return getattr(self._last, name)


class BranchDB:
    """`PooledDB`'s run / transaction, lending a BranchCursor over a cursor of each pool."""

    def __init__(self, users: PooledDB, agent: PooledDB) -> None:
        self.users = users
        self.agent = agent
        self.engine = users.engine

    def _with_cursor(self, fn: Callable[[BranchCursor], T]) -> T:
        # Always users' pool first, then the agent's: no two callers wait on each other.
        return self.users.run_sync(lambda u: self.agent.run_sync(lambda a: fn(BranchCursor(u, a))))

    async def run(self, fn: Callable[[Any], T]) -> T:
        return await self.engine.run_uncounted(self._with_cursor, fn)

    async def transaction(self, fn: Callable[[Any], T]) -> T:
        return await self.engine.run_uncounted(self._with_cursor, in_transaction(fn))

    def run_sync(self, fn: Callable[[Any], T]) -> T:
        return self._with_cursor(fn)

    def with_session_cursor(self, cur: Any, fn: Callable[[Any], T]) -> T:
        """For a wire session's own cursor (its worker thread): the agent side from the pool."""
        return self.agent.run_sync(lambda a: fn(BranchCursor(cur, a)))
