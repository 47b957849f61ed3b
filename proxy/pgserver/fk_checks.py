"""The server's foreign keys (foreign_keys.py) around one statement the runner runs.

A write whose SQL names a table of a foreign key is checked right after it, in the same
transaction; outside any transaction the statement gets one of its own, so a violation
undoes it. DDL may change keys or drop their tables: the registry is read again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import duckdb

from proxy.pgserver import foreign_keys
from transpiler import Statement

T = TypeVar("T")


class WriteCheck:
    """Foreign keys checked after one DML statement, on the worker thread."""

    def __init__(
        self, st: Statement, sql: str, *, enabled: bool, autocommit: bool, in_block: bool
    ) -> None:
        """`enabled`: DML outside a branch (a branch checks its own copies); `autocommit`:
        no transaction is open, so the check needs one of its own; `in_block`: the client
        BEGAN a block, which checks DEFERRABLE INITIALLY DEFERRED keys at COMMIT."""
        self.kind = st.kind
        self.sql = sql
        self.enabled = enabled
        self.autocommit = autocommit
        self.in_block = in_block
        # Known once run() has read the keys: the statement touches a key's table.
        self.active = enabled

    def run(self, cur: duckdb.DuckDBPyConnection, work: Callable[[], T]) -> T:
        """Run `work` (the statement), then check and carry out the keys it touches."""
        self.active = self.enabled and foreign_keys.touched(foreign_keys.load(cur), self.sql)
        own_txn = self.active and self.autocommit
        if own_txn:
            cur.begin()
        try:
            out = work()
            if self.active:
                foreign_keys.after_write(cur, self.sql, self.kind, not self.in_block)
            if own_txn:
                cur.commit()
        except BaseException:
            if own_txn:
                with contextlib.suppress(duckdb.Error):
                    cur.rollback()
            raise
        return out


async def after_ddl(
    call: Callable[..., Awaitable[Any]], cur: duckdb.DuckDBPyConnection, st: Statement, sql: str
) -> None:
    """After DDL ran: constraint names and keys are read again, and the keys of tables
    dropped (or renamed away) go with them."""
    foreign_keys.changed()
    if st.tag in ("DROP TABLE", "DROP SCHEMA") or (
        st.tag == "ALTER TABLE" and " RENAME " in sql.upper()
    ):
        await call(foreign_keys.forget_dropped, cur)
