"""One agent-lake poller per proxy: the catch-up of every shared service (memories, API
keys, the session search index) hangs off it.

Every tick it reads the agent lake's latest snapshot id (one catalog query: all an idle
tick costs) and, when it moved, what the new snapshots changed
(`ducklake_snapshot_changes` in the catalog database, by snapshot id: one more), and
wakes only the subscribers whose tables those snapshots touched; a snapshot that changed
something else (a schema, a table it cannot name) wakes everyone, one this process
signed as its own (agent_lake.sign: rows it holds already) no one. So a memory stored
elsewhere costs this proxy one change-feed read (its memories'), not one per service,
and an idle proxy one cheap query per tick. Ticks come every `POLL_SECS`, and every
`FAST_SECS` for `BUSY_SECS` after a tick that saw a change (writes come in bursts: the
next one is seen sooner, an idle proxy does not pay for it).

A subscriber catches up from its own last snapshot (its feed position), so the poller
only says when; a round that fails is tried again at the next tick (the subscriber's
snapshot is not marked seen). A subscriber with work of its own to retry (a publish the
lake refused) says so with `due`. Without the catalog's change table (another DuckLake
layout) the poller reads the current snapshot id and wakes every subscriber when it moves.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb

from proxy.core.periodic import run_every
from proxy.db.agent_lake import AUTHOR, METADATA, current_snapshot

if TYPE_CHECKING:
    from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.engine")

POLL_SECS = 0.25
FAST_SECS = 0.05  # the tick while changes keep coming
BUSY_SECS = 2.0  # how long after a change the ticks stay fast
# Changes of one table (`kind:table_id`); any other kind (a table created, altered or
# dropped, a schema) wakes every subscriber and reloads the table ids.
_TABLE_CHANGES = frozenset(
    {"inserted_into_table", "deleted_from_table", "compacted_table", "inlined_insert",
     "inlined_delete", "flushed_inlined"}
)  # fmt: skip
EVERY = -1  # a change that concerns every subscriber


@dataclass
class _Subscriber:
    what: str
    catch_up: Callable[[], Awaitable[object]]
    due: Callable[[], bool] | None
    tables: frozenset[str]  # the shared tables it follows (schema.table); none: all
    seen: int | None = None  # the snapshot its last successful round started at


@dataclass
class Changes:
    """What a tick read: the latest snapshot id and, per snapshot after the one asked
    from, the tables it touched (EVERY: unknown, wake all)."""

    snap: int
    touched: list[tuple[int, frozenset[int]]]


def parse_changes(changes_made: str) -> frozenset[int]:
    """The table ids of a `ducklake_snapshot_changes.changes_made` ('inserted_into_table:5,
    deleted_from_table:7'); EVERY among them for a change not to one table's rows."""
    ids: set[int] = set()
    for item in (changes_made or "").split(","):
        kind, _, ref = item.strip().partition(":")
        ids.add(int(ref) if kind in _TABLE_CHANGES and ref.isdigit() else EVERY)
    return frozenset(ids)


class LakePoller:
    def __init__(self, db: PooledDB, seconds: float = POLL_SECS, metadata: str = METADATA) -> None:
        self.db = db
        self.seconds = seconds
        self.metadata = metadata  # the catalog's tables as DuckDB names them
        self._subs: list[_Subscriber] = []
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._tables: dict[int, str] = {}  # table id -> schema.table
        self._by_table = True  # False: the catalog's change table is not readable
        self._busy_until = 0.0
        self.ticks = 0  # snapshot reads (for tests and logs)
        self.wakes = 0  # subscriber rounds run

    def subscribe(
        self,
        what: str,
        catch_up: Callable[[], Awaitable[object]],
        due: Callable[[], bool] | None = None,
        tables: Iterable[str] = (),
    ) -> None:
        """Run `catch_up()` after a snapshot changed one of `tables` (the local names of
        the shared tables it reads; none: any change), or whenever `due()`."""
        self._subs.append(_Subscriber(what, catch_up, due, frozenset(tables)))

    def _read(self, cur: duckdb.DuckDBPyConnection, since: int | None) -> Changes:
        snap = current_snapshot(cur)  # the cheaper read (CPU): all an idle tick costs
        if since is None or not self._by_table or snap == since:
            return Changes(snap, [])
        rows = cur.execute(
            f"SELECT snapshot_id, changes_made, author FROM {self.metadata}"
            ".ducklake_snapshot_changes WHERE snapshot_id > ? AND snapshot_id <= ?"
            " ORDER BY snapshot_id",
            [since, snap],
        ).fetchall()
        # A commit this process signed (agent_lake.sign) changed nothing it lacks.
        touched = [(int(s), frozenset() if a == AUTHOR else parse_changes(c)) for s, c, a in rows]
        names = {i for _, ids in touched for i in ids} - {EVERY}
        if any(EVERY in ids for _, ids in touched) or names - set(self._tables):
            self._tables = {
                int(i): f"{s}.{t}"
                for i, s, t in cur.execute(
                    f"SELECT t.table_id, s.schema_name, t.table_name FROM {self.metadata}"
                    f".ducklake_table t JOIN {self.metadata}.ducklake_schema s USING"
                    " (schema_id) WHERE t.end_snapshot IS NULL AND s.end_snapshot IS NULL"
                ).fetchall()
            }
        return Changes(snap, touched)

    async def _changes(self, since: int | None) -> Changes:
        try:
            return await self.db.read(lambda cur: self._read(cur, since))
        except (duckdb.CatalogException, duckdb.BinderException) as exc:  # not this layout
            self._by_table = False
            log.info("agent lake: no per-table change list (%s): waking every service", exc)
            return await self.db.read(lambda cur: self._read(cur, None))

    def _concerns(self, s: _Subscriber, ch: Changes) -> bool:
        if s.seen is None:  # its first round, or every round so far, failed
            return True
        if not self._by_table:
            return s.seen != ch.snap
        for at, ids in ch.touched:
            if at <= s.seen or not ids:  # seen, or signed by this process
                continue
            if not s.tables or EVERY in ids or any(self._tables.get(i) in s.tables for i in ids):
                return True
        return False

    async def tick(self) -> None:
        started = time.monotonic()
        known = [s.seen for s in self._subs if s.seen is not None]
        since = min(known) if known else None
        ch = await self._changes(since)
        self.ticks += 1
        if any(ids for _, ids in ch.touched) or (not self._by_table and ch.snap != since):
            self._busy_until = time.monotonic() + BUSY_SECS  # another proxy writes
        woken = []
        for s in self._subs:
            if self._concerns(s, ch) or (s.due is not None and s.due()):
                woken.append(s)
            else:
                s.seen = ch.snap  # nothing it follows changed
        if not woken:
            return
        self.wakes += len(woken)
        read = time.monotonic()
        results = await asyncio.gather(*(s.catch_up() for s in woken), return_exceptions=True)
        for s, result in zip(woken, results, strict=True):
            if isinstance(result, BaseException):
                log.warning("catching up with the agent lake (%s) failed: %s", s.what, result)
            else:
                s.seen = ch.snap
        log.debug(
            "agent lake: snapshot %d read in %.0f ms; %s caught up in %.0f ms",
            ch.snap,
            (read - started) * 1000,
            ", ".join(s.what for s in woken),
            (time.monotonic() - read) * 1000,
        )

    def interval(self) -> float:
        """Seconds to the next tick: shorter while changes keep coming."""
        fast = time.monotonic() < self._busy_until
        return min(FAST_SECS, self.seconds) if fast else self.seconds

    async def start(self) -> None:
        if self._task is not None or not self._subs:
            return
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(
            run_every(self.interval, self.tick, self._stop, "polling the agent lake"),
            name="hatiproxy-agent-lake-poll",
        )

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task
            self._task = None
