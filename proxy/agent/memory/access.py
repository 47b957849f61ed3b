"""Memory access counts without write amplification.

A read only bumps an in-RAM counter (`touch`); the counts are written in one UPDATE
every `access_tracker_flush_interval_secs` and at stop. Reads add the unflushed counts
(`pending`) to what the table says, so callers never see stale numbers. The rows a flush
changed go to `written` (the vector index keeps copies of memory rows: memory_rows).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proxy.agent.memory.args import now

if TYPE_CHECKING:
    import duckdb

    from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.agent.memory")


class AccessTracker:
    def __init__(
        self,
        db: PooledDB,
        write_lock: asyncio.Lock,
        table: str,
        returning: str = "",
        written: Callable[[list[tuple[Any, ...]]], None] | None = None,
    ) -> None:
        self.db = db
        self.table = table  # the memory table (access_count, last_accessed)
        self.write_lock = write_lock  # the memory service's: one writer of agent_memory
        self.returning = returning  # a RETURNING clause for the flush's UPDATE
        self.written = written  # gets the rows it returned, after the commit
        self.pending: dict[str, list[Any]] = {}  # memory_id -> [count, last_accessed]
        # Searches from SQL touch from client connections' threads (search_memory's
        # any_loop), flushes run on the main loop: a count must not be lost in between.
        self._mu = threading.Lock()

    def touch(self, memory_ids: list[str]) -> None:
        at = now()
        with self._mu:
            for mid in memory_ids:
                entry = self.pending.get(mid)
                if entry is None:
                    self.pending[mid] = [1, at]
                else:
                    entry[0] += 1
                    entry[1] = at

    async def flush(self) -> int:
        """Write the counted accesses in one UPDATE; returns how many memories it touched."""
        if not self.pending:
            return 0
        import pyarrow as pa

        with self._mu:
            batch, self.pending = self.pending, {}
        table = pa.table(
            {
                "memory_id": pa.array(list(batch), pa.string()),
                "n": pa.array([v[0] for v in batch.values()], pa.int64()),
                "at": pa.array([v[1] for v in batch.values()], pa.timestamp("us", tz="UTC")),
            }
        )

        def write(cur: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
            cur.register("_hati_mem_access", table)
            try:
                t = self.table
                return cur.execute(
                    f"UPDATE {t} SET access_count = access_count + d.n,"
                    " last_accessed = greatest(coalesce(last_accessed, d.at), d.at)"
                    f" FROM _hati_mem_access d WHERE {t}.memory_id = d.memory_id::UUID"
                    f" {self.returning}"
                ).fetchall()
            finally:
                cur.unregister("_hati_mem_access")

        async with self.write_lock:  # held until `written` ran: copies follow commit order
            try:
                changed = await self.db.transaction(write)
            except Exception:
                # Put the counts back (merged with newer ones) for the next flush.
                with self._mu:
                    for mid, (n, at) in batch.items():
                        entry = self.pending.setdefault(mid, [0, at])
                        entry[0] += n
                        entry[1] = max(entry[1], at)
                raise
            if self.written is not None:
                self.written(changed)
        return len(batch)

    async def run(self, interval: float, stop: asyncio.Event) -> None:
        """Flush every `interval` seconds until `stop` is set (stop() flushes the rest)."""
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), interval)
                return
            except TimeoutError:
                pass
            try:
                await self.flush()
            except Exception:
                log.exception("flushing memory access counts failed")
