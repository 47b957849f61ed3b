"""Agent tables rewritten without their deleted rows, by the journal's applier.

DuckDB keeps a deleted row's storage (file and buffer pool) until its whole row group
goes (proxy/db/table_rewrite.py), so a table whose rows are stored and deleted again
(memories and their vectors: ~1.3 KB of memory per stored-then-deleted memory) grows with
use. Every `agent_compaction_interval_secs` the applier counts each registered table's
deleted rows; a table holding at least `agent_compaction_min_deleted` of them, and at
least `agent_compaction_deleted_fraction` of its live rows, is rewritten.

A copy made while another transaction writes the table loses that write, so the rewrite
runs where every writer is held off: in the journal's applier between two batches (no
journaled write is applied meanwhile; those arriving are acknowledged from the fsynced
log and applied after it) and under the lock every other writer of those tables takes
(the memory service's write lock: the transaction path, delete, the embedding pump,
access counts, maintenance and admin functions, the lake mirror). All tables of a group
are rewritten in one transaction: a crash leaves the tables as they were or as rewritten,
and the journal replays what it had not applied.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.db.table_rewrite import TableRows, rewrite_table, table_rows

if TYPE_CHECKING:
    from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.agent.compaction")

CHECKPOINT_WAITS = (0.01, 0.05, 0.1, 0.2, 0.5)  # seconds between refused checkpoints


@dataclass
class _Group:
    lock: asyncio.Lock  # what every writer of these tables holds
    tables: tuple[str, ...]  # "schema.table"
    broken: bool = False  # a rewrite failed: not tried again until restart


@dataclass(frozen=True)
class Compacted:
    table: str
    kept: int
    dropped: int


class Compaction:
    def __init__(self, db: PooledDB, config: Any) -> None:
        self.db = db
        self.min_deleted = int(getattr(config, "agent_compaction_min_deleted", 2_000))
        self.fraction = float(getattr(config, "agent_compaction_deleted_fraction", 0.25))
        self.interval = float(getattr(config, "agent_compaction_interval_secs", 30.0))
        self._groups: list[_Group] = []
        self._next = time.monotonic() + self.interval
        self.runs = 0  # rewrites done (tests)

    def register(self, lock: asyncio.Lock, tables: tuple[str, ...]) -> None:
        """Tables that accumulate deleted rows, and the lock all their writers take."""
        self._groups.append(_Group(lock, tables))

    @property
    def enabled(self) -> bool:
        return self.min_deleted > 0

    def wants(self, rows: TableRows) -> bool:
        return rows.deleted >= max(self.min_deleted, self.fraction * rows.live)

    async def between_batches(self) -> None:
        """The applier's call between batches: count, and rewrite what needs it, when due."""
        if not self.enabled or time.monotonic() < self._next:
            return
        try:
            await self.run()
        finally:
            self._next = time.monotonic() + self.interval

    async def run(self) -> list[Compacted]:
        """Rewrite every registered table that holds enough deleted rows."""
        done: list[Compacted] = []
        for group in self._groups:
            if group.broken:
                continue
            counts = await self.db.read(lambda cur, g=group: _counts(cur, g.tables))
            if not any(r is not None and self.wants(r) for r in counts.values()):
                continue
            try:
                done += await self._rewrite(group)
            except (duckdb.Error, LookupError):
                group.broken = True
                log.exception("agent compaction of %s failed; off until restart", group.tables)
        return done

    async def _rewrite(self, group: _Group) -> list[Compacted]:
        t0 = time.monotonic()
        before = await self.db.read(_storage)
        async with group.lock:  # every other writer of these tables waits from here
            held = time.monotonic()

            def tx(cur: duckdb.DuckDBPyConnection) -> list[Compacted]:
                out = []
                for name, rows in _counts(cur, group.tables).items():
                    if rows is not None and self.wants(rows):
                        log.info(
                            "agent compaction: rewriting %s (%d rows, %d deleted)",
                            name,
                            rows.live,
                            rows.deleted,
                        )
                        schema, table = name.split(".", 1)
                        out.append(Compacted(name, rewrite_table(cur, schema, table), rows.deleted))
                return out

            done = await self.db.transaction(tx)
            held = time.monotonic() - held
        if not done:
            return done
        self.runs += 1
        # The old tables' blocks are free in the file once checkpointed (most of their
        # buffer-pool memory went at commit).
        await checkpoint(self.db)
        after = await self.db.read(_storage)
        log.info(
            "agent compaction: %s; %.3f s (writers held off %.3f s); database blocks used"
            " %d -> %d, DuckDB memory %.1f -> %.1f MiB",
            ", ".join(f"{c.table} {c.kept} rows kept, {c.dropped} deleted dropped" for c in done),
            time.monotonic() - t0,
            held,
            before[0],
            after[0],
            before[1] / 2**20,
            after[1] / 2**20,
        )
        return done


async def checkpoint(db: PooledDB) -> bool:
    """CHECKPOINT, tried a few times: DuckDB refuses one while a write transaction runs
    (FORCE CHECKPOINT would wait for it, and a transaction that waits for the applier
    would then wait for ever). Refused throughout: the next automatic one does it."""
    for wait in (*CHECKPOINT_WAITS, None):
        try:
            await db.run(lambda cur: cur.execute("CHECKPOINT"))
            return True
        except duckdb.TransactionException as exc:
            if wait is None:
                log.info("agent compaction: checkpoint left for later (%s)", exc)
                return False
            await asyncio.sleep(wait)
    return False


def _counts(cur: duckdb.DuckDBPyConnection, tables: tuple[str, ...]) -> dict[str, TableRows | None]:
    return {name: table_rows(cur, *name.split(".", 1)) for name in tables}


def _storage(cur: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """The database's used blocks and DuckDB's memory in use (bytes)."""
    used = cur.execute(
        "SELECT used_blocks FROM pragma_database_size() WHERE database_name = current_database()"
    ).fetchone()
    mem = cur.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
    return int(used[0]) if used else 0, int(mem[0] or 0) if mem else 0
