"""The store journal: `store_memory` without `wait` is acknowledged once its memory is in
an fsynced append log beside the agent database, and applied to the table right after.

Why: DuckDB's insert + commit costs ~5-10 ms a store (bench/memory.py), while appending
and fsyncing one JSON line costs well under 0.1 ms. Nothing acknowledged is lost: the log
is replayed at start (an entry whose memory_id is already in the table is skipped; a torn
last line, from a crash in the middle of a write, was never acknowledged and is ignored),
and it is truncated only when every entry in it is in the table.

Only the simple case goes through it (one memory, no `supersedes`, no `wait`); the rest
takes the transaction path (store.py) after this agent's journal entries are applied,
so the order of writes holds. Deduplication stays exact: each agent's content hashes that
ever reached the table are kept in RAM (a superset of the live ones; a hash found there
takes the transaction path, which answers from the table), and a text still waiting in
the journal returns the first one's id with deduplicated = true.

Read-your-writes: every memory function but store_memory, and every statement reading
the `_hatidata_agent_memory` relation, first waits until the caller's journal entries
written before it are applied (AgentLayer.before_call, before_relations). What reads
another agent's memories (a grant) may see them a few ms late.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import os
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proxy.agent.memory.schema import T_MEM
from proxy.core.errors import AgentError

if TYPE_CHECKING:
    import duckdb

log = logging.getLogger("hatiproxy.agent.memory")

APPLY_MAX = 256  # journal entries per apply transaction
SETTLE_TIMEOUT = 30.0  # longest a read waits for the journal before it errors
RETRY_DELAYS = (0.05, 0.2, 1.0, 5.0)  # between failed apply rounds

INSERT = (
    f"INSERT INTO {T_MEM} (memory_id, org_id, agent_id, session_id, memory_type, content,"
    " metadata, importance, created_at, updated_at, content_hash, expires_at)"
)
# One row of INSERT's columns: (id, org, agent, session, type, content, metadata JSON text,
# importance, created_at, updated_at, content_hash, expires_at).
Row = tuple[Any, ...]


def insert_rows(cur: duckdb.DuckDBPyConnection, rows: list[Row]) -> list[int]:
    """Insert memory rows; their seqs in order. Many go in one statement."""
    if len(rows) <= 1:
        return [
            cur.execute(
                f"{INSERT} VALUES (?, ?, ?, ?, ?, ?, ?::JSON, ?, ?, ?, ?, ?) RETURNING seq", row
            ).fetchone()[0]
            for row in rows
        ]
    import pyarrow as pa

    names = ("id", "org", "agent", "sess", "typ", "content", "meta", "imp", "ca", "ua", "h", "exp")
    types = (pa.string(),) * 7 + (pa.float64(),) + (pa.timestamp("us", tz="UTC"),) * 2
    types += (pa.string(), pa.timestamp("us", tz="UTC"))
    table = pa.table(
        {
            n: pa.array([r[i] for r in rows], t)
            for i, (n, t) in enumerate(zip(names, types, strict=True))
        }
    )
    cur.register("_hati_new_memories", table)
    try:
        got = cur.execute(
            f"{INSERT} SELECT id::UUID, org, agent, sess, typ, content, meta::JSON, imp, ca, ua,"
            " h, exp FROM _hati_new_memories RETURNING memory_id::VARCHAR, seq"
        ).fetchall()
    finally:
        cur.unregister("_hati_new_memories")
    by_id = dict(got)
    return [by_id[r[0]] for r in rows]


@dataclass
class Entry:
    """One acknowledged store waiting in the journal."""

    row: Row
    pos: int  # this agent's count of journal entries when it was written
    data: bytes  # its line in the log

    @property
    def key(self) -> tuple[str, str]:
        return (self.row[1], self.row[2])


@dataclass
class AgentLog:
    appended: int = 0
    applied: int = 0
    by_digest: dict[str, Entry] = field(default_factory=dict)
    waiters: list[tuple[int, asyncio.Future[None]]] = field(default_factory=list)


def _encode(row: Row) -> bytes:
    r = list(row)
    for i in (8, 9, 11):
        r[i] = r[i].isoformat() if r[i] is not None else None
    return (json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _decode(line: bytes) -> Row:
    r = json.loads(line)
    for i in (8, 9, 11):
        r[i] = dt.datetime.fromisoformat(r[i]) if r[i] is not None else None
    return tuple(r)


def _apply_tx(cur: duckdb.DuckDBPyConnection, rows: list[Row]) -> list[tuple[Row, int]]:
    """Insert the rows not yet in the table (a replay may find some there); (row, seq)."""
    ids = [r[0] for r in rows]
    there = {
        r[0]
        for r in cur.execute(
            f"SELECT memory_id::VARCHAR FROM {T_MEM} WHERE memory_id IN (SELECT unnest(?::UUID[]))",
            [ids],
        ).fetchall()
    }
    fresh = [r for r in rows if r[0] not in there]
    return list(zip(fresh, insert_rows(cur, fresh), strict=True))


class Journal:
    def __init__(self, mem: Any, path: str | None) -> None:
        # mem: the Memory service (service.py; not imported: it imports this module)
        self.mem = mem
        self.path = path  # None: an in-memory database, no journal (every store is slow)
        self._fd: int | None = None
        self._size = 0
        self._pending: list[Entry] = []
        self._agents: dict[tuple[str, str], AgentLog] = {}
        self._known: set[int] = set()  # hash((org, agent, content_hash)) ever in the table
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        # The log still holds entries already applied (truncated only when none waits):
        # a delete must not run then, or a replay after a crash would bring them back.
        self._dirty = False
        self._appended_all = 0  # entries written since start, all agents
        self._applied_all = 0
        self._all_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.enabled = True  # False: every store takes the transaction path (benchmarks)

    # ---- lifecycle ----------------------------------------------------------------

    def replay(self, cur: duckdb.DuckDBPyConnection) -> int:
        """Start-up (before anything is served): apply what the log holds, load the known
        hashes, open the log for appending. The number of entries applied."""
        applied = 0
        if self.path is not None and os.path.exists(self.path):
            with open(self.path, "rb") as f:
                lines = f.read().split(b"\n")
            rows = []
            for n, line in enumerate(lines):
                if not line.strip():
                    continue
                try:
                    rows.append(_decode(line))
                except (ValueError, TypeError, IndexError):
                    # Only the last line can be torn (a crash mid-write, never acknowledged).
                    log.warning("memory journal %s: line %d unreadable, ignored", self.path, n + 1)
            if rows:
                cur.begin()
                try:
                    applied = len(_apply_tx(cur, rows))
                    cur.commit()
                except BaseException:
                    cur.rollback()
                    raise
                log.info("memory journal: %d of %d entries replayed", applied, len(rows))
        self._pending.clear()
        self._agents.clear()
        self._applied_all = self._appended_all
        self._known = {
            hash(tuple(r))
            for r in cur.execute(
                f"SELECT DISTINCT org_id, agent_id, content_hash FROM {T_MEM}"
            ).fetchall()
        }
        if self.path is not None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.fsync(self._fd)
            self._size = 0
        return applied

    def start(self) -> None:
        self._stopping = False
        self._task = asyncio.create_task(self._apply_loop(), name="hatiproxy-memory-journal")

    async def stop(self) -> None:
        """Apply everything waiting (the log is then empty), then close it."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=30)
            except (TimeoutError, asyncio.CancelledError):
                log.warning("memory journal: %d entries left for next start", len(self._pending))
            except Exception:
                log.exception("memory journal task failed")
            self._task = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # ---- the fast path ----------------------------------------------------------------

    def note_stored(self, org: str, agent: str, digest: str) -> None:
        """A memory with this hash reached the table (the transaction path)."""
        self._known.add(hash((org, agent, digest)))

    def try_append(
        self,
        org: str,
        agent: str,
        digest: str,
        make_row: Any,
    ) -> tuple[Row, bool] | None:
        """Acknowledge a store through the log: (row, deduplicated), or None when it must
        take the transaction path (no log, or a hash the table may hold)."""
        if self._fd is None or self._stopping or not self.enabled:
            return None
        ag = self._agents.get((org, agent))
        if ag is not None and digest in ag.by_digest:
            return ag.by_digest[digest].row, True
        if hash((org, agent, digest)) in self._known:
            return None
        row: Row = make_row(str(uuid.uuid4()))
        data = _encode(row)
        try:
            os.write(self._fd, data)
            os.fdatasync(self._fd)
        except OSError:
            # Cut a partial line off, so the next entry starts clean; then the slow path.
            log.exception("memory journal write failed")
            try:
                os.ftruncate(self._fd, self._size)
                os.lseek(self._fd, self._size, os.SEEK_SET)
            except OSError:
                self._fd = None  # can't trust the log's end: stop using it
            return None
        self._size += len(data)
        if ag is None:
            ag = self._agents[(org, agent)] = AgentLog()
        ag.appended += 1
        entry = Entry(row, ag.appended, data)
        ag.by_digest[digest] = entry
        self._known.add(hash((org, agent, digest)))
        self._pending.append(entry)
        self._appended_all += 1
        self._wake.set()
        return row, False

    async def settled(self, org: str, agent: str, *, writing: bool = False) -> None:
        """Return once this agent's entries written so far are in the table; `writing`
        (a delete may follow): also once the log holds no applied entry."""
        await self._settled(org, agent)
        if writing and self._dirty:
            self._compact()

    def _compact(self) -> None:
        """Rewrite the log with only the entries still waiting (atomically: rename)."""
        if self._fd is None or self.path is None:
            return
        data = b"".join(e.data for e in self._pending)
        tmp = self.path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
            os.replace(tmp, self.path)
            dir_fd = os.open(os.path.dirname(self.path) or ".", os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except BaseException:
            os.close(fd)
            raise
        os.close(self._fd)
        self._fd, self._size, self._dirty = fd, len(data), False

    async def settled_all(self) -> None:
        """Return once every agent's entries written so far are in the table (reads
        across an organisation: REST's memory routes)."""
        if self._applied_all >= self._appended_all:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._all_waiters.append((self._appended_all, fut))
        await self._wait(fut)

    async def _settled(self, org: str, agent: str) -> None:
        ag = self._agents.get((org, agent))
        if ag is None or ag.applied >= ag.appended:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ag.waiters.append((ag.appended, fut))
        await self._wait(fut)

    async def _wait(self, fut: asyncio.Future[None]) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(fut), SETTLE_TIMEOUT)
        except TimeoutError:
            raise AgentError.unavailable(
                "stored memories are not reaching the memory table (see the server log)",
                hint="retry shortly",
            ) from None

    # ---- applying ---------------------------------------------------------------------

    async def _apply_loop(self) -> None:
        failures = 0
        while True:
            if not self._pending:
                if self._stopping:
                    return
                await self._wake.wait()
                self._wake.clear()
                continue
            batch = self._pending[:APPLY_MAX]
            try:
                await self._apply(batch)
                failures = 0
            except Exception:
                log.exception("applying %d journaled memories failed", len(batch))
                if self._stopping and failures >= len(RETRY_DELAYS):
                    return  # left in the log: the next start replays them
                await asyncio.sleep(RETRY_DELAYS[min(failures, len(RETRY_DELAYS) - 1)])
                failures += 1

    async def _apply(self, batch: list[Entry]) -> None:
        mem = self.mem
        rows = [e.row for e in batch]

        def indexed(done: list[tuple[Row, int]]) -> None:  # under the write lock
            for row, seq in done:
                mem.index.note_unembedded(row[1], row[2], seq)

        done = await mem.stores.run(lambda cur: _apply_tx(cur, rows), indexed)
        del self._pending[: len(batch)]
        self._applied_all += len(batch)
        still_all = []
        for target, fut in self._all_waiters:
            if target <= self._applied_all:
                if not fut.done():
                    fut.set_result(None)
            else:
                still_all.append((target, fut))
        self._all_waiters = still_all
        for e in batch:
            ag = self._agents[e.key]
            ag.applied = max(ag.applied, e.pos)
            if ag.by_digest.get(e.row[10]) is e:
                del ag.by_digest[e.row[10]]
            still = []
            for target, fut in ag.waiters:
                if target <= ag.applied:
                    if not fut.done():
                        fut.set_result(None)
                else:
                    still.append((target, fut))
            ag.waiters = still
            if ag.applied >= ag.appended and not ag.waiters:
                del self._agents[e.key]
        if not self._pending and self._fd is not None:
            # Everything in the log is in the table (committed): start it afresh.
            os.ftruncate(self._fd, 0)
            os.lseek(self._fd, 0, os.SEEK_SET)
            os.fdatasync(self._fd)
            self._size, self._dirty = 0, False
        else:
            self._dirty = True
        mem.queue_embeddings([(row[0], seq, row[1], row[2], row[5]) for row, seq in done])
