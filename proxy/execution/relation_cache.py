"""The agent relations without re-reading or re-registering unchanged rows.

Reading a caller's rows of `_hatidata_agent_memory` from the agent database and
registering them on the session's cursor on every statement cost several times a
plain table read. Two things make a repeated read cheap, and neither widens what a
caller sees:

- `RowCache`: the Arrow rows per (caller's org, caller's agent, relation), kept only
  while the agent database's change clock (proxy/db/change_clock.py) has not moved
  since they were read. Any call that may write, from any connection or interface,
  moves it, so the next statement anywhere reads afresh.
- `ShownRelations`: what a session's cursor has registered. The same rows are not
  registered again while the registration is known to be in place: made outside a
  transaction block (a block's rollback would undo it) by a plain query (a DDL could
  drop or replace the temp view). Anything else registers in full, as before. An agent
  call's result (new rows each statement) keeps its typed view the same way when the
  columns are the same: only its rows are registered anew.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import duckdb

from proxy.db.change_clock import ChangeClock

MAX_BYTES = 64 * 1024 * 1024  # Arrow rows kept across all callers
Relation = tuple[str, Any, Sequence[tuple[str, str]]]  # as sql_bridge.Relation


class RowCache:
    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._lock = threading.Lock()
        self._rows: OrderedDict[tuple, tuple[int, Any]] = OrderedDict()
        self._bytes = 0
        self.max_bytes = max_bytes

    def cached(self, clock: ChangeClock, key: tuple) -> Any | None:
        """The rows for `key` if cached and the clock has not moved since (else None)."""
        generation = clock.stable()
        if generation is None:
            return None
        with self._lock:
            hit = self._rows.get(key)
            if hit is not None and hit[0] == generation:
                self._rows.move_to_end(key)
                return hit[1]
        return None

    def rows(
        self, clock: ChangeClock, key: tuple, read: Callable[[], Any]
    ) -> Any:  # a pyarrow.Table
        """The rows for `key`: cached while the clock stays put, else `read()`."""
        generation = clock.stable()
        hit = self.cached(clock, key)
        if hit is not None:
            return hit
        table = read()
        if generation is not None and clock.stable() == generation:  # no write meanwhile
            self._put(key, generation, table)
        return table

    def _put(self, key: tuple, generation: int, table: Any) -> None:
        size = int(table.nbytes)
        if size > self.max_bytes // 4:
            return
        with self._lock:
            old = self._rows.pop(key, None)
            if old is not None:
                self._bytes -= int(old[1].nbytes)
            self._rows[key] = (generation, table)
            self._bytes += size
            while self._bytes > self.max_bytes and self._rows:
                _, (_, dropped) = self._rows.popitem(last=False)
                self._bytes -= int(dropped.nbytes)


CACHE = RowCache()
_EMPTY = object()  # registered empty (describe): the shape, no rows


class ShownRelations:
    """The agent relations registered on one session's cursor, for its last statement."""

    def __init__(self) -> None:
        self.rows: dict[str, Any] = {}  # name -> the Arrow rows registered (_EMPTY)
        self.settled: set[str] = set()  # registrations known to be in place
        self.columns: dict[str, Sequence[tuple[str, str]]] = {}  # name -> its view's columns
        # Agent calls whose view reads registered Arrow rows (`<name>_rows`): new rows
        # need only be registered under that name, the view stays.
        self.arrow: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.rows)

    def show(
        self,
        cur: duckdb.DuckDBPyConnection,
        relations: Sequence[Relation],
        settled: bool,
        register: Callable[[duckdb.DuckDBPyConnection, Sequence[Relation]], None],
        unregister: Callable[[duckdb.DuckDBPyConnection, set[str]], None],
        fill: Callable[[duckdb.DuckDBPyConnection, str, Any, Sequence[tuple[str, str]]], None],
        replace: Callable[
            [duckdb.DuckDBPyConnection, str, Any, Sequence[tuple[str, str]], bool], bool
        ]
        | None = None,
    ) -> None:
        """On the worker thread: this statement's relations, and no stale ones.
        `settled`: whether what is registered now stays (outside a block, a query).
        `replace`: registers an agent call's new rows under its view in place; told
        whether that view reads registered Arrow rows, says whether it does now."""
        wanted = {name for name, _, _ in relations}
        stale = set(self.rows) - wanted
        if stale:
            unregister(cur, stale)
            for name in stale:
                del self.rows[name]
                self.settled.discard(name)
                self.columns.pop(name, None)
                self.arrow.discard(name)
        for relation in relations:
            name, table, columns = relation
            rows = _EMPTY if table is None else table
            # An agent relation's rows may be the same again; an agent call's are new each
            # time, but its view stays when its columns do.
            in_place = name in self.settled
            agent_relation = name.startswith("_hatidata_")
            before = self.rows.get(name) if in_place else None
            if agent_relation and before is not None and (rows is before or rows is _EMPTY):
                pass  # in place already (an empty one only gives the shape)
            elif agent_relation and before is not None and before is not _EMPTY:
                fill(cur, name, table, columns)  # the view reads its table by name
            elif (
                replace is not None
                and not agent_relation
                and before is not None
                and before is not _EMPTY
                and rows is not _EMPTY
                and self.columns.get(name) == columns
            ):
                if replace(cur, name, table, columns, name in self.arrow):
                    self.arrow.add(name)
                else:
                    self.arrow.discard(name)
            else:
                register(cur, [relation])
                self.columns[name] = columns
                self.arrow.discard(name)  # which form `register` chose is not known here
            if not (agent_relation and before is not None and rows is _EMPTY):
                self.rows[name] = rows
            if settled:
                self.settled.add(name)
            else:
                self.settled.discard(name)
