"""The agent journal: a write acknowledged once it is in an fsynced log beside the agent
database, and applied to its table a moment later (store_memory without `wait`,
append_event; each a `Kind`).

Why: a DuckDB insert + commit of the agent database costs ~5-10 ms a write, writing and
fsyncing one JSON record well under a millisecond on a quiet disk. The write runs on
the caller's own thread (a client connection's, not the server's main loop), so a busy
main loop does not delay the acknowledgement; callers that append at the same time share
one fdatasync (group commit: whoever syncs takes everything written so far).

Nothing acknowledged is lost: the log (journal_log.py: preallocated segments overwritten
in place, records with a CRC) is replayed at start (each kind skips rows its table already
holds; a torn record, from a crash in the middle of a write, was never acknowledged and
ends the replay), and a segment is recycled only once every entry in it is in its table.
A write that could make a replay wrong (a delete: the replay would bring the row back)
first records, synced, that every entry applied so far is not to be replayed
(`settled(writing=True)`, the watermark).

Applying: entries are applied in log order, in batches (one transaction per kind run),
after at most APPLY_DELAY, or at once when someone waits for them. Read-your-writes:
every agent function but the journaled ones, and every statement reading an agent
relation, first waits until the caller's entries written before it are applied
(AgentLayer.before_call, before_relations).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from proxy.agent import journal_log
from proxy.agent.journal_waiters import release, resolve_anywhere, running_loop
from proxy.core import durability
from proxy.core.errors import AgentError

if TYPE_CHECKING:
    import duckdb

log = logging.getLogger("hatiproxy.agent.journal")

APPLY_MAX = 256  # journal entries per apply round
APPLY_DELAY = 0.005  # seconds entries may wait to be applied together, unless awaited
SETTLE_TIMEOUT = 30.0  # longest a read waits for the journal before it errors
RETRY_DELAYS = (0.05, 0.2, 1.0, 5.0)  # between failed apply rounds
IDLE_UPKEEP = 1.0  # seconds between `between_batches` calls while nothing is applied

Row = tuple[Any, ...]
Key = tuple[str, str]  # (org_id, agent_id)


class Kind(Protocol):
    """One kind of journaled write (memory/journal.py, sessions/journal.py)."""

    name: str

    def encode(self, row: Row) -> list[Any]: ...

    def decode(self, data: list[Any]) -> Row: ...

    def replay(self, cur: duckdb.DuckDBPyConnection, rows: list[Row]) -> int:
        """At start, inside a transaction: write the rows the table lacks; how many."""
        ...

    async def apply(self, rows: list[Row]) -> None:
        """On the main loop: write the rows (one transaction) and what follows them."""
        ...

    def applied(self, rows: list[Row]) -> None:
        """On the main loop, after apply: forget what was kept for the fast path."""
        ...


@dataclass
class Entry:
    kind: str
    key: Key
    row: Row
    pos: int  # this key's count of entries when it was written
    data: bytes  # its record's payload in the log
    ticket: int  # the journal's count of writes when it was written


@dataclass
class KeyLog:
    appended: int = 0
    applied: int = 0
    waiters: list[tuple[int, asyncio.Future[None]]] = field(default_factory=list)


class Journal:
    def __init__(self, path: str | None) -> None:
        self.path = path  # None: an in-memory database, no journal (every write is slow)
        self.kinds: dict[str, Kind] = {}
        self.enabled = True  # False: every write takes the transaction path (benchmarks)
        self._mu = threading.Lock()  # the state below, taken from any thread
        self._cv = threading.Condition(self._mu)  # the flusher and those waiting for it
        self._sync = threading.Lock()  # one fdatasync (or log rewrite) at a time
        self._files: journal_log.Files | None = None  # None: no log, or not trusted
        self._written = 0  # writes since start (tickets)
        self._synced = 0  # tickets known durable
        self._failed = 0  # tickets whose fdatasync failed
        # Set when an fdatasync fails: the tickets synced before. The kernel may have
        # dropped the lines it held, so a later success proves nothing for later tickets;
        # no more appends (every write takes the transaction path).
        self._safe_upto: int | None = None
        self._flusher: threading.Thread | None = None
        self._upkeeper: threading.Thread | None = None  # spare segments, recycling
        self._upkeep = threading.Event()
        self._closing = False
        self.syncs = 0  # fdatasyncs of appended lines (tests and benchmarks)
        self._pending: list[Entry] = []
        self._keys: dict[Key, KeyLog] = {}
        self._applied_all = 0
        self._all_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wm = threading.Lock()  # one watermark write at a time
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._applier_idle = False  # the applier waits for `_wake` with nothing pending
        self._urgent = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        # Called between two batches, while no journaled write is applied (compaction.py).
        self.between_batches: list[Callable[[], Awaitable[None]]] = []

    def register(self, kind: Kind) -> None:
        self.kinds[kind.name] = kind

    @property
    def active(self) -> bool:
        return (
            self._files is not None
            and self.enabled
            and not self._stopping
            and self._safe_upto is None
        )

    # ---- lifecycle ----------------------------------------------------------------

    def replay(self, cur: duckdb.DuckDBPyConnection) -> int:
        """Start-up (before anything is served): apply what the log holds, then start a
        new segment. The number of entries applied."""
        applied = 0
        if self.path is None:
            return 0
        files = journal_log.Files(self.path)
        records, top = files.recover()
        lines = [p for _, p in records]
        legacy = os.path.exists(self.path)  # a one-file JSON-lines log of an older version
        if legacy:
            with open(self.path, "rb") as f:
                lines = f.read().split(b"\n") + lines
        runs: list[tuple[Kind, list[Row]]] = []
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                name, data = json.loads(line)
                kind = self.kinds[name]
                row = kind.decode(data)
            except (ValueError, TypeError, IndexError, KeyError):
                # Only the last line of an older log can be torn (never acknowledged).
                log.warning("agent journal %s: entry %d unreadable, ignored", self.path, n + 1)
                continue
            if runs and runs[-1][0] is kind:
                runs[-1][1].append(row)
            else:
                runs.append((kind, [row]))
        if runs:
            cur.begin()
            try:
                applied = sum(kind.replay(cur, rows) for kind, rows in runs)
                cur.commit()
            except BaseException:
                cur.rollback()
                raise
            total = sum(len(r) for _, r in runs)
            log.info("agent journal: %d of %d entries replayed", applied, total)
        files.open()
        if legacy:
            os.unlink(self.path)
        with self._mu:
            self._pending.clear()
            self._keys.clear()
            self._written = self._synced = self._applied_all = top  # LSNs go on
            self._files = files
        return applied

    def start(self) -> None:
        self._stopping = self._closing = False
        self._loop = asyncio.get_running_loop()
        if self._files is not None:
            self._flusher = threading.Thread(
                target=self._flush_loop, name="hatiproxy-journal-sync", daemon=True
            )
            self._flusher.start()
            self._upkeeper = threading.Thread(
                target=self._upkeep_loop, name="hatiproxy-journal-upkeep", daemon=True
            )
            self._upkeeper.start()
        self._task = asyncio.create_task(self._apply_loop(), name="hatiproxy-agent-journal")

    async def stop(self) -> None:
        """Apply everything waiting (the log is then empty), then close it."""
        self._stopping = True
        self._wake.set()
        self._urgent.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=30)
            except (TimeoutError, asyncio.CancelledError):
                log.warning("agent journal: %d entries left for next start", len(self._pending))
            except Exception:
                log.exception("agent journal task failed")
            self._task = None
        with self._cv:
            self._closing = True
            self._cv.notify_all()
        self._upkeep.set()
        for thread in (self._flusher, self._upkeeper):
            if thread is not None:
                await asyncio.to_thread(thread.join, 30)
        self._flusher = self._upkeeper = None
        if not self._pending:  # all applied: the next start has nothing to replay
            with contextlib.suppress(OSError):
                await asyncio.to_thread(self._mark_applied)
        with self._sync, self._mu:
            if self._files is not None:
                self._files.close()
                self._files = None

    # ---- appending (any thread) -------------------------------------------------------

    def write(self, kind: str, key: Key, row: Row) -> Entry | None:
        """Append a line (not yet durable: `durable(entry)`); None when the journal is off
        or the write failed (the caller takes the transaction path)."""
        data = json.dumps(
            [kind, self.kinds[kind].encode(row)], ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")
        with self._mu:
            if not self.active:
                return None
            files = self._files
            assert files is not None
            try:
                if not files.append(self._written + 1, data):
                    self._upkeep.set()  # the segment is full: a spare is on its way
                    return None
            except OSError:
                log.exception("agent journal write failed")
                self._files = None  # can't trust the log's end: stop using it
                return None
            if files.wants_spare():
                self._upkeep.set()
            self._written += 1
            kl = self._keys.get(key)
            if kl is None:
                kl = self._keys[key] = KeyLog()
            kl.appended += 1
            entry = Entry(kind, key, row, kl.appended, data, self._written)
            self._pending.append(entry)
            self._cv.notify()  # the flusher
            # Wake the applier only when it sleeps with nothing to apply: while it waits
            # to batch or applies, it looks at `_pending` again on its own. Why: a wake
            # per write cost the main loop a wake-up (and the GIL a hand-off) per store.
            wake, self._applier_idle = self._applier_idle, False
        loop = self._loop
        if wake and loop is not None:
            loop.call_soon_threadsafe(self._wake.set)
        return entry

    def durable(self, entry: Entry) -> None:
        """Return once the entry is fsynced, or, while a client statement runs, before its
        reply is sent (core/durability.py: the fsync overlaps the statement's work).
        Raises AgentError when the log cannot be synced (the entry is applied anyway)."""
        durability.wait_or_defer(lambda: self._wait_synced(entry.ticket))

    def _wait_synced(self, ticket: int) -> None:
        with self._cv:
            while self._synced < ticket or self._safe_upto is not None:
                if self._safe_upto is not None and ticket <= self._safe_upto:
                    return
                if self._safe_upto is not None or self._flusher is None:
                    raise AgentError.unavailable(
                        "the write could not be made durable (see the server log)",
                        hint="it may still be applied: read before writing it again",
                    )
                if not self._cv.wait(SETTLE_TIMEOUT):
                    raise AgentError.unavailable("the journal's fsync did not finish in time")

    def _flush_loop(self) -> None:
        """The flusher thread: one fdatasync for everything written since the last one
        (group commit)."""
        while True:
            with self._cv:
                while max(self._synced, self._failed) >= self._written and not self._closing:
                    self._cv.wait()
                if max(self._synced, self._failed) >= self._written:
                    return  # closing, nothing left to sync
            with self._sync:
                with self._mu:
                    files, upto = self._files, self._written
                    if files is not None:
                        retiring, current = files.retiring, files.current
                        files.retiring = []
                try:
                    if files is None:
                        raise OSError("agent journal closed")
                    files.sync(retiring, current)
                    with self._mu:
                        files.full += retiring
                    self.syncs += 1
                    ok = True
                except OSError:
                    log.exception("agent journal fdatasync failed")
                    ok = False
            with self._cv:
                if ok:
                    self._synced = max(self._synced, upto)
                else:
                    self._failed = max(self._failed, upto)
                    if self._safe_upto is None:
                        self._safe_upto = self._synced
                self._cv.notify_all()
                if not ok and self._closing:
                    return

    # ---- waiting for entries (main loop) ------------------------------------------------

    async def settled(self, org: str, agent: str, *, writing: bool = False) -> None:
        """Return once this agent's entries written so far are in their tables; `writing`
        (a delete may follow): also once the log holds no applied entry."""
        with self._mu:
            kl = self._keys.get((org, agent))
            fut = None
            if kl is not None and kl.applied < kl.appended:
                fut = asyncio.get_running_loop().create_future()
                kl.waiters.append((kl.appended, fut))
        if fut is not None:
            self._hurry()
            await self._wait(fut)
        files = self._files
        if writing and files is not None and self._applied_all > files.watermark:
            await asyncio.to_thread(self._mark_applied)

    async def settled_all(self) -> None:
        """Return once every entry written so far is in its table (reads across an
        organisation: REST's memory routes)."""
        with self._mu:
            if self._applied_all >= self._written:
                return
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._all_waiters.append((self._written, fut))
        self._hurry()
        await self._wait(fut)

    def _hurry(self) -> None:
        """Have the applier apply now. `settled` may be awaited on a client connection's
        own loop (search_memory runs there: registry.AgentFunction.any_loop), and the
        applier's event belongs to the main loop."""
        loop = self._loop
        if loop is None or running_loop() is loop:
            self._urgent.set()
        else:
            with contextlib.suppress(RuntimeError):  # the main loop has closed: stopping
                loop.call_soon_threadsafe(self._urgent.set)

    async def _wait(self, fut: asyncio.Future[None]) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(fut), SETTLE_TIMEOUT)
        except TimeoutError:
            raise AgentError.unavailable(
                "journaled writes are not reaching their tables (see the server log)",
                hint="retry shortly",
            ) from None

    def _mark_applied(self) -> None:
        """Record (synced) that the entries applied so far are never to be replayed."""
        with self._wm:
            files, upto = self._files, self._applied_all
            if files is not None:
                files.set_watermark(upto)

    def _upkeep_loop(self) -> None:
        """The upkeep thread: recycle or remove full segments whose entries are all
        applied; have a spare segment ready before the current one is full."""
        while True:
            self._upkeep.wait()
            self._upkeep.clear()
            with self._mu:
                files = self._files
                if files is None or self._closing:
                    return
                done = [s for s in files.full if s.last_lsn <= self._applied_all]
                files.full = [s for s in files.full if s not in done]
                # A full-size one is kept to become the next spare (the first is small).
                for seg in done:
                    if files.recyclable is None and seg.size >= journal_log.SEGMENT_BYTES:
                        files.recyclable = seg
                done = [s for s in done if s is not files.recyclable]
                number = files.current.number + 1 if files.current is not None else 0
                reuse = files.recyclable
                want = files.spare is None and files.wants_spare()
                if want:
                    files.recyclable = None
            try:
                for seg in done:
                    os.unlink(seg.path)
                spare = files.make_spare(number, reuse) if want else None
            except OSError:
                log.exception("agent journal: preparing a segment failed")
                continue
            if spare is not None:
                with self._mu:
                    files.spare = spare

    # ---- applying (main loop) -----------------------------------------------------------

    async def _apply_loop(self) -> None:
        failures = 0
        while True:
            if not self._pending:
                if self._stopping:
                    return
                with self._mu:  # a write after this wakes us (see write)
                    self._applier_idle = not self._pending
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), IDLE_UPKEEP)
                self._wake.clear()
                await self._between_batches()
                continue
            if not self._urgent.is_set() and len(self._pending) < APPLY_MAX:
                # Let the writes of the next moment share this round's transaction.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._urgent.wait(), APPLY_DELAY)
            self._urgent.clear()
            with self._mu:
                batch = self._pending[:APPLY_MAX]
            try:
                await self._apply(batch)
                failures = 0
                await self._between_batches()
            except Exception:
                log.exception("applying %d journaled writes failed", len(batch))
                if self._stopping and failures >= len(RETRY_DELAYS):
                    return  # left in the log: the next start replays them
                await asyncio.sleep(RETRY_DELAYS[min(failures, len(RETRY_DELAYS) - 1)])
                failures += 1

    async def _between_batches(self) -> None:
        if self._stopping:
            return
        for task in self.between_batches:
            try:
                await task()
            except Exception:  # upkeep failing must not stop the applier
                log.exception("agent journal upkeep between batches failed")

    async def _apply(self, batch: list[Entry]) -> None:
        runs: list[tuple[Kind, list[Row]]] = []
        for e in batch:
            kind = self.kinds[e.kind]
            if runs and runs[-1][0] is kind:
                runs[-1][1].append(e.row)
            else:
                runs.append((kind, [e.row]))
        for kind, rows in runs:
            await kind.apply(rows)
        done: list[asyncio.Future[None]] = []
        with self._mu:
            del self._pending[: len(batch)]
            self._applied_all += len(batch)
            self._all_waiters = release(self._all_waiters, self._applied_all, done)
            for e in batch:
                kl = self._keys[e.key]
                kl.applied = max(kl.applied, e.pos)
                kl.waiters = release(kl.waiters, kl.applied, done)
                if kl.applied >= kl.appended and not kl.waiters:
                    del self._keys[e.key]
            if self._files is not None and self._files.full:
                self._upkeep.set()  # a full segment may now be recycled
        for kind, rows in runs:
            kind.applied(rows)
        for fut in done:
            resolve_anywhere(fut)
