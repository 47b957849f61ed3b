"""Group commit for memory writes: the stores waiting at one moment share one transaction.

Why: every write of the memory service holds its one write lock (service.py) for a
DuckDB transaction on a worker thread, and a durable commit costs ~10 ms on a plain
disk (the WAL's fsync) before the thread hops back through a busy GIL. One at a time,
50 connections storing memories queued for seconds behind that lock (bench/load.py:
store_memory p50 6.3 s at 50 connections). Here a store only enqueues its transaction
function; whoever finds no round running starts one, which takes everything queued, runs
it in ONE transaction under the lock (one worker hop, one commit) and answers each
caller. The queue is bounded: past `MAX_WAITING` stores a caller gets SQLSTATE 53000
(insufficient_resources; HTTP 503) at once rather than an unbounded wait.

Each function runs in order on the shared cursor, so a later store sees an earlier one's
row (deduplication within a round works as across rounds). A function may raise
AgentError only before it writes (store_memory checks first): that caller gets the error
and the round goes on. Any other exception aborts the transaction; the round is then run
again one function per transaction, so one bad store fails alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proxy.core.errors import AgentError

if TYPE_CHECKING:
    import duckdb

    from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.agent.memory")

ROUND_MAX = 256  # stores per transaction
MAX_WAITING = 10_000  # stores queued before new ones are refused

Work = Callable[["duckdb.DuckDBPyConnection"], Any]
After = Callable[[Any], None]


class WriteBatcher:
    """Runs queued transaction functions together; `after(result)` runs for each under the
    lock, in commit order (index updates must follow the order rows were written)."""

    def __init__(self, db: PooledDB, lock: asyncio.Lock) -> None:
        self.db = db
        self.lock = lock
        self._queue: list[tuple[Work, After, asyncio.Future[Any]]] = []
        self._draining = False
        self.rounds = 0  # transactions run (for tests and benchmarks)

    async def run(self, work: Work, after: After) -> Any:
        if len(self._queue) >= MAX_WAITING:
            raise AgentError(
                "busy",
                f"too many memory writes waiting ({MAX_WAITING}); retry shortly",
                sqlstate="53000",
                http_status=503,
                hint="store many memories in one call, or slow down",
            )
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((work, after, fut))
        if not self._draining:
            self._draining = True
            asyncio.get_running_loop().create_task(self._drain())
        # Shielded: a cancelled caller does not cancel the round the others wait for.
        return await asyncio.shield(fut)

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue[:ROUND_MAX], self._queue[ROUND_MAX:]
                async with self.lock:
                    outcomes = await self._round(batch)
                    for (_, after, fut), (ok, value) in zip(batch, outcomes, strict=True):
                        if ok:
                            try:
                                after(value)
                            except Exception as exc:  # the row is written; say what failed
                                log.exception("memory write follow-up failed")
                                ok, value = False, exc
                        if not fut.done():
                            if ok:
                                fut.set_result(value)
                            else:
                                fut.set_exception(value)
        finally:
            self._draining = False

    async def _round(self, batch: list[tuple[Work, After, asyncio.Future[Any]]]) -> list:
        works = [w for w, _, _ in batch]

        def together(cur: duckdb.DuckDBPyConnection) -> list[tuple[bool, Any]]:
            out: list[tuple[bool, Any]] = []
            for work in works:
                try:
                    out.append((True, work(cur)))
                except AgentError as exc:  # raised before it wrote: only this caller
                    out.append((False, exc))
            return out

        self.rounds += 1
        try:
            return await self.db.transaction(together)
        except Exception as exc:
            if len(works) == 1:
                return [(False, exc)]
        # One failed the whole transaction: each again alone, so only it fails.
        outcomes: list[tuple[bool, Any]] = []
        for work in works:
            try:
                outcomes.append((True, await self.db.transaction(work)))
            except Exception as exc:
                outcomes.append((False, exc))
        return outcomes
