"""Process-wide count of writes that commit, for ROLLBACK TO SAVEPOINT's replay.

Replaying a transaction's earlier writes (proxy/pgserver/savepoints.py) is only exact when no
other transaction committed a write since it began: the replay runs on a new DuckDB
snapshot. Every writer of the database lives in this process, so each one brackets
its commit with `begin()` before and `end()` after:

- wire sessions: an autocommit write, an implicit block's commit, the COMMIT of an
  explicit block that wrote (proxy/pgserver/runner.py, proxy/pgserver/savepoints.py);
- main-loop DuckDB work (MCP, REST): `Engine.run` counts all of it; the agent layer's
  cursors on the users' database (`CountingCursor`: branches, pg_proc) and the MCP/REST
  SQL path count only work that may write, so reads there never make a replay refuse;
- the embedded-column filler.

Writes to the agent database (proxy/db/agent_db.py: memories, ledger, keys, the
embedding cache, ...) are not counted: no client transaction reads that database, so
they cannot change what a replay sees.

A transaction reads `finished` before its BEGIN. Later, `begun == that value` proves
that no write was in flight then and none has started since: nothing can have
committed in between. Reads by others never count; counting a write that then
rolls back only costs a refused replay.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from transpiler import Statement


class CommitClock:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # += is not atomic across threads
        self.begun = 0
        self.finished = 0

    def begin(self) -> None:
        """Before a write that commits (or may) starts."""
        with self._lock:
            self.begun += 1

    def end(self) -> None:
        """After that write committed or rolled back; exactly once per begin()."""
        with self._lock:
            self.finished += 1

    @contextmanager
    def writing(self) -> Iterator[None]:
        self.begin()
        try:
            yield
        finally:
            self.end()

    def quiet_since(self, finished_before: int) -> bool:
        """True when no write began after `finished` was read as `finished_before`
        and none was in flight then."""
        return self.begun == finished_before


CLOCK = CommitClock()


class OpenWrite:
    """A wire session's write outside an explicit block, counted until it settles (its
    autocommit statement, implicit block or session ended)."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open = False

    def begin(self) -> None:
        if not self.open:
            self.open = True
            CLOCK.begin()

    def end(self) -> None:
        if self.open:
            self.open = False
            CLOCK.end()


# First words of a statement that only reads (DuckDB has no writable CTEs).
_READ_WORDS = frozenset({"select", "with", "from", "values", "table", "show", "describe"})
# What a counting cursor may do before it counts: reading results and transaction control
# (a COMMIT ends writes already counted), registering a Python object as a view.
_PASSIVE = frozenset({
    "fetchall", "fetchone", "fetchmany", "fetchnumpy", "fetchdf", "fetch_df", "df",
    "fetch_arrow_table", "arrow", "description", "rowcount", "begin", "commit", "rollback",
    "close", "register", "unregister",
})  # fmt: skip


def _may_write(sql: str) -> bool:
    """False only for one statement that surely reads: it starts with a read-only word and
    touches no sequence. Anything else counts (comments first, several statements, ...)."""
    text = sql.strip().rstrip(";").lower()
    if ";" in text or "nextval" in text or "setval" in text:
        return True
    words = text.lstrip("(").split(None, 1)
    return not words or words[0] not in _READ_WORDS


class CountingCursor:
    """A main-loop DuckDB cursor that joins the commit clock's count at its first statement
    that may write (or any call it cannot judge) and leaves it at `settle()`, after the
    work committed or failed. Read-only work never counts."""

    __slots__ = ("_cur", "counting")

    def __init__(self, cur: Any) -> None:
        self._cur = cur
        self.counting = False

    def execute(self, query: str, parameters: Any = None) -> CountingCursor:
        if not self.counting and _may_write(query):
            self._count()
        self._cur.execute(query, parameters)
        return self

    def executemany(self, query: str, parameters: Any = None) -> CountingCursor:
        if not self.counting and _may_write(query):
            self._count()
        self._cur.executemany(query, parameters)
        return self

    def __getattr__(self, name: str) -> Any:
        if not self.counting and name not in _PASSIVE:
            self._count()
        return getattr(self._cur, name)

    def _count(self) -> None:
        CLOCK.begin()
        self.counting = True

    def settle(self) -> None:
        if self.counting:
            self.counting = False
            CLOCK.end()


# Statement kinds that never write on their own (SAVEPOINT, SET and SHOW are answered by
# the session; a SELECT may still write: see statement_may_write).
READ_KINDS = frozenset({"select", "show", "explain", "set", "reset", "savepoint"})


def statement_may_write(st: Statement, sql: str, builds_fts: bool) -> bool:
    """May running `sql` (the transpiled `st`) write? Then the commit clock must count it."""
    return (
        st.kind not in READ_KINDS
        or builds_fts  # builds the full-text index
        or (st.kind == "select" and sql.startswith("CREATE"))  # SELECT INTO
        or (st.kind == "explain" and "ANALY" in sql[:30].upper())  # runs the statement
    )
