"""Per-key usage: requests by interface, queries, branch work, last use.

Counting is in memory (`count`); the counts are written in one transaction every
`access_tracker_flush_interval_secs` and when the server stops, so no request writes
to DuckDB. Readers (`usage`) add the unflushed counts to the stored ones under the same
lock the flush holds, so a count is never missing or seen twice.

What is counted, per API key:
- requests: wire logins (connections), REST and MCP-over-HTTP requests it authenticated;
- queries: SQL statements admitted for it (wire, MCP query tools; a prepared statement
  counts once, when it is parsed);
- branch work: branch_create / branch_merge / branch_discard / branch_query calls from
  any interface.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from proxy.core.names import INTERNAL_SCHEMA

if TYPE_CHECKING:
    import duckdb

    from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.access.usage")

T_USAGE = f"{INTERNAL_SCHEMA}.api_key_usage"
INTERFACES = ("wire", "rest", "mcp")
COUNTERS = (
    "wire_requests",
    "rest_requests",
    "mcp_requests",
    "queries",
    "branches_created",
    "branches_merged",
    "branches_discarded",
    "branch_queries",
)
# Agent functions whose calls are branch work, and the counter each adds to.
BRANCH_CALLS = {
    "branch_create": "branches_created",
    "branch_merge": "branches_merged",
    "branch_discard": "branches_discarded",
    "branch_query": "branch_queries",
}
_COLUMNS = ", ".join(f"{c} BIGINT NOT NULL DEFAULT 0" for c in COUNTERS)
SCHEMA_SQL = (
    f"CREATE TABLE IF NOT EXISTS {T_USAGE} (key_id UUID PRIMARY KEY, {_COLUMNS},"
    " first_used_at TIMESTAMPTZ, last_used_at TIMESTAMPTZ)"
)


@dataclass
class _Pending:
    counts: dict[str, int]
    first: datetime
    last: datetime


class UsageTracker:
    def __init__(self, db: PooledDB, flush_interval: float) -> None:
        self.db = db
        self.flush_interval = flush_interval
        self.pending: dict[str, _Pending] = {}
        self._lock = asyncio.Lock()  # one flush at a time; readers see stored + pending once
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None

    # -- the layer's service protocol ---------------------------------------------------
    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(SCHEMA_SQL)

    async def start(self) -> None:
        self._stop.clear()
        self._task = asyncio.create_task(self._run(), name="hatiproxy-key-usage")

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task
            self._task = None
        await self.flush()  # everything counted before the stop is kept

    # -- counting -----------------------------------------------------------------------
    def count(self, key_id: str, counter: str, n: int = 1) -> None:
        now = datetime.now(UTC)
        entry = self.pending.get(key_id)
        if entry is None:
            entry = self.pending[key_id] = _Pending({}, now, now)
        entry.counts[counter] = entry.counts.get(counter, 0) + n
        entry.last = now

    def request(self, key_id: str, interface: str) -> None:
        self.count(key_id, f"{interface}_requests")

    def last_used(self, key_id: str) -> datetime | None:
        """The newest unflushed use of a key (None: nothing since the last flush)."""
        entry = self.pending.get(key_id)
        return entry.last if entry is not None else None

    # -- storage ------------------------------------------------------------------------
    async def flush(self) -> int:
        """Write the pending counts in one transaction; returns how many keys it touched."""
        async with self._lock:
            if not self.pending:
                return 0
            batch, self.pending = self.pending, {}
            try:
                await self.db.transaction(lambda cur: _write(cur, batch))
            except Exception:
                for key_id, entry in batch.items():  # kept for the next flush
                    for counter, n in entry.counts.items():
                        self.count(key_id, counter, n)
                    self.pending[key_id].first = min(self.pending[key_id].first, entry.first)
                raise
            return len(batch)

    async def usage(self, key_id: str) -> dict[str, Any]:
        """Stored plus unflushed counts of one key: COUNTERS, first_used_at, last_used_at."""
        async with self._lock:
            row = await self.db.run(
                lambda cur: cur.execute(
                    f"SELECT {', '.join(COUNTERS)}, first_used_at, last_used_at FROM {T_USAGE}"
                    " WHERE key_id = ?",
                    [key_id],
                ).fetchone()
            )
            names = (*COUNTERS, "first_used_at", "last_used_at")
            empty = (*(0 for _ in COUNTERS), None, None)
            out: dict[str, Any] = dict(zip(names, row or empty, strict=True))
            entry = self.pending.get(key_id)
            if entry is not None:
                for counter, n in entry.counts.items():
                    out[counter] += n
                out["first_used_at"] = out["first_used_at"] or entry.first
                out["last_used_at"] = max(filter(None, (out["last_used_at"], entry.last)))
            return out

    async def _run(self) -> None:
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._stop.wait(), self.flush_interval)
                return
            except TimeoutError:
                pass
            try:
                await self.flush()
            except Exception:
                log.exception("flushing API key usage failed")


def _write(cur: duckdb.DuckDBPyConnection, batch: dict[str, _Pending]) -> None:
    from proxy.access.keys import T_KEYS

    adds = ", ".join(f"{c} = {T_USAGE}.{c} + EXCLUDED.{c}" for c in COUNTERS)
    rows = [
        [key_id, *(e.counts.get(c, 0) for c in COUNTERS), e.first, e.last]
        for key_id, e in batch.items()
    ]
    cur.executemany(
        f"INSERT INTO {T_USAGE} (key_id, {', '.join(COUNTERS)}, first_used_at, last_used_at)"
        f" VALUES (?, {', '.join('?' for _ in COUNTERS)}, ?, ?) ON CONFLICT (key_id) DO UPDATE"
        f" SET {adds}, last_used_at = greatest({T_USAGE}.last_used_at, EXCLUDED.last_used_at)",
        rows,
    )
    cur.executemany(
        f"UPDATE {T_KEYS} SET last_used_at = greatest(coalesce(last_used_at, ?), ?)"
        " WHERE key_id = ?",
        [[e.last, e.last, key_id] for key_id, e in batch.items()],
    )


@dataclass(frozen=True)
class KeyMeter:
    """One key's counters, carried on its Identity (see proxy.core.registry)."""

    tracker: UsageTracker
    key_id: str

    def query(self) -> None:
        self.tracker.count(self.key_id, "queries")

    def agent_call(self, name: str) -> None:
        counter = BRANCH_CALLS.get(name)
        if counter is not None:
            self.tracker.count(self.key_id, counter)
