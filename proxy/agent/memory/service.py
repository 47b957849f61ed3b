"""Agent long-term memory: storage, background embedding, access tracking.

Tables (schema `hatidata_internal`, created idempotently at start):
- `agent_memory`: one row per memory (the brief's columns plus embedding_status,
  embedding_model, embedding_error, embedding_attempts, content_hash, conflict_status,
  superseded_by_id, expires_at, confidence, and `seq`, a dense integer key for the
  in-RAM vector index). `importance` and `confidence` are DOUBLE: PostgreSQL's FLOAT
  is double precision, and 0.8 should read back as 0.8.
- `agent_memory_vectors(memory_id, embedding FLOAT[dims])`: the durable vectors, only
  ever inserted and deleted (never updated). Searched through `memory_index` (see
  there for why not an HNSW index).
- `agent_memory_grants`: read access an agent gave another agent of its org.
- Relation `_hatidata_agent_memory` (memory/schema.py, core/relations.py): the caller's
  rows (and rows granted to it), produced for each statement that names it.

Write path: `store` validates, deduplicates by SHA-256 of the content per (org, agent)
among live memories, inserts (and retires a superseded memory) in one transaction and
returns with `has_embedding = false`; the embedding pump then embeds through the
batching EmbeddingWorker and writes vector + status in one transaction. A failed
embedding is retried with backoff (`RETRY_DELAYS`), then marked 'failed'; the memory
stays findable by keyword. `wait := true` embeds at once and returns when the memory
is searchable (or says why not). At start every 'pending' memory is queued again, so
work interrupted by a crash completes. All writes of this service are serialised by
one asyncio lock: DuckDB would otherwise abort one of two transactions touching a row.

Access tracking (memory_access.AccessTracker): search and get_memory count accesses in
memory; one batched UPDATE writes them every `access_tracker_flush_interval_secs` and at
stop. Table names and DDL are in memory_schema.py.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from proxy.agent.memory import schema as memory_schema
from proxy.agent.memory.access import AccessTracker
from proxy.agent.memory.args import parse_weights
from proxy.agent.memory.index import Attrs, VectorIndex
from proxy.agent.memory.journal import MemoryKind
from proxy.agent.memory.rows import index_attrs, refresh_index
from proxy.agent.memory.schema import MEMORY_COLUMNS, RETURNING_ROWS, SELECT_COLUMNS, T_MEM, T_VEC
from proxy.agent.memory.shared import SharedMemories
from proxy.agent.memory.write_batch import WriteBatcher
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.memory")


MAX_CONTENT_BYTES = 1_000_000
MAX_METADATA_BYTES = 100_000
MAX_TYPE_CHARS = 100
RETRY_DELAYS = (0.5, 2.0, 8.0)  # seconds before attempts 2, 3, 4; then 'failed'
WAIT_TIMEOUT = 30.0  # longest `wait := true` holds a store call
PUMP_BATCH = 256  # memories taken off the queue per embedding round


# Live = what default reads and searches show: not retired, not expired.
LIVE = "conflict_status = 'none' AND (expires_at IS NULL OR expires_at > now())"


def memory_row(row: tuple[Any, ...], pending_access: dict[str, list[Any]]) -> dict[str, Any]:
    """A SELECT_COLUMNS row as a result dict (metadata parsed, unflushed accesses added)."""
    out = dict(zip((n for n, _ in MEMORY_COLUMNS), row, strict=True))
    if out["metadata"] is not None:
        out["metadata"] = json.loads(out["metadata"])
    extra = pending_access.get(out["memory_id"])
    if extra is not None:
        out["access_count"] = (out["access_count"] or 0) + extra[0]
        out["last_accessed"] = extra[1]
    return out


@dataclass
class EmbedJob:
    """One memory waiting to be embedded."""

    memory_id: str
    seq: int
    org_id: str
    agent_id: str
    content: str
    attempt: int = 0  # failed attempts so far


class Memory:
    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        self.config = layer.config
        self.enabled = bool(getattr(self.config, "memory_enabled", True))
        self.max_results = int(getattr(self.config, "memory_max_results", 100))
        self.weights = parse_weights(getattr(self.config, "memory_score_weights", ""))
        self.flush_interval = float(getattr(self.config, "access_tracker_flush_interval_secs", 60))
        self.retry_delays: tuple[float, ...] = RETRY_DELAYS
        self.stop_timeout = 15.0  # how long stop() lets the batch being embedded finish
        self.index = VectorIndex(layer.dims)
        self.write_lock = asyncio.Lock()
        # store_memory's transactions, group-committed under write_lock (write_batch.py)
        self.stores = WriteBatcher(layer.db, self.write_lock)
        # store_memory's fast path: acknowledged once in the agent journal (journal.py)
        self.journal = MemoryKind(self, layer.journal)
        self._queue: asyncio.Queue[EmbedJob | None] = asyncio.Queue()
        self._queued: set[str] = set()  # memory ids in the queue or being embedded
        self._waiters: dict[str, list[asyncio.Future[str]]] = {}
        self._retry_handles: set[asyncio.TimerHandle] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self.access = AccessTracker(
            layer.db,
            self.write_lock,
            T_MEM,
            RETURNING_ROWS,
            lambda rows: refresh_index(self.index, rows),
        )
        self._stopping = False
        self._stop_event = asyncio.Event()
        # With a DuckLake catalog: memories shared with the other proxies (shared.py).
        self.shared = (
            SharedMemories(layer.db, self.index, self.write_lock, lambda: self.model_name)
            if self.enabled and getattr(self.config, "lake_catalog", "")
            else None
        )

    # ---- schema -------------------------------------------------------------------

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Create the tables, sequence and view (idempotent); migrate vector dimensions."""
        memory_schema.install(cur, self.layer.dims)
        if self.shared is not None:
            self.shared.install(cur)

    # ---- lifecycle ----------------------------------------------------------------

    @property
    def embedder(self) -> Any:
        return self.layer.semantic.embedder

    @property
    def model_name(self) -> str | None:
        e = self.embedder
        return e.model_name if e is not None else None

    async def start(self) -> None:
        if not self.enabled:
            return
        self._stopping = False
        self._stop_event = asyncio.Event()
        # The layer replayed the journal first: the load below queues its embeddings.
        await self.layer.db.run(self.journal.load)
        if self.embedder is not None:
            jobs = await self.layer.db.run(self._load)
            for job in jobs:
                self._enqueue(job)
            if jobs:
                log.info("memory: %d pending embeddings queued", len(jobs))
            self._tasks.append(asyncio.create_task(self._pump(), name="hatiproxy-memory-embed"))
        if self.shared is not None:
            await self.shared.start()
        self._tasks.append(
            asyncio.create_task(
                self.access.run(self.flush_interval, self._stop_event),
                name="hatiproxy-memory-access",
            )
        )

    def _load(self, cur: duckdb.DuckDBPyConnection) -> list[EmbedJob]:
        """Start-up: vectors of the current model into RAM; everything else re-queued."""
        model = self.model_name
        cur.begin()
        try:
            # Vectors of another model (same size) live in another space: embed again.
            cur.execute(
                f"UPDATE {T_MEM} SET has_embedding = false, embedding_status = 'pending',"
                " embedding_attempts = 0 WHERE embedding_status = 'embedded'"
                " AND embedding_model IS DISTINCT FROM ?",
                [model],
            )
            cur.execute(
                f"DELETE FROM {T_VEC} WHERE memory_id NOT IN ("
                f" SELECT memory_id FROM {T_MEM} WHERE has_embedding)"
            )
            cur.commit()
        except BaseException:
            cur.rollback()
            raise
        table = cur.execute(
            f"SELECT m.org_id, m.agent_id, m.seq, v.embedding FROM {T_VEC} v"
            f" JOIN {T_MEM} m USING (memory_id)"
        ).to_arrow_table()
        self.index.clear()
        if table.num_rows:
            # The rows as search returns them (fetchall's Python values), by seq.
            rows = {
                r[0]: r[1:]
                for r in cur.execute(
                    f"SELECT seq, {SELECT_COLUMNS} FROM {T_MEM} WHERE has_embedding"
                ).fetchall()
            }
            seqs = table.column("seq").to_numpy()
            emb = table.column("embedding").combine_chunks()
            vecs = np.asarray(emb.values.to_numpy(zero_copy_only=False), dtype=np.float32)
            self.index.add_many(
                table.column("org_id").to_pylist(),
                table.column("agent_id").to_pylist(),
                seqs,
                vecs.reshape(table.num_rows, self.index.dims),
                [index_attrs(rows[int(s)]) for s in seqs],
            )
        for org, agent, seq in cur.execute(
            f"SELECT org_id, agent_id, seq FROM {T_MEM} WHERE NOT has_embedding"
        ).fetchall():
            self.index.note_unembedded(org, agent, seq)
        rows = cur.execute(
            f"SELECT memory_id::VARCHAR, seq, org_id, agent_id, content FROM {T_MEM}"
            " WHERE embedding_status = 'pending' ORDER BY seq"
        ).fetchall()
        return [EmbedJob(*r) for r in rows]

    async def stop(self) -> None:
        self._stopping = True
        self._stop_event.set()
        for h in self._retry_handles:
            h.cancel()
        self._retry_handles.clear()
        self._queue.put_nowait(None)
        for task in self._tasks:
            # The batch being embedded may finish; the rest stays 'pending' for next start.
            try:
                await asyncio.wait_for(task, timeout=self.stop_timeout)
            except (TimeoutError, asyncio.CancelledError):
                pass
            except Exception:
                log.exception("memory task failed")
        self._tasks.clear()
        for futures in self._waiters.values():
            for f in futures:
                if not f.done():
                    f.set_result("pending")
        self._waiters.clear()
        if self.shared is not None:
            await self.shared.stop()
        if self.enabled:
            await self.access.flush()

    async def status_counts(self) -> dict[str, int]:
        """Memories by embedding status, for the metrics."""

        def count(cur: duckdb.DuckDBPyConnection) -> dict[str, int]:
            sql = f"SELECT embedding_status, count(*) FROM {T_MEM} GROUP BY ALL"
            return {str(status): int(n) for status, n in cur.execute(sql).fetchall()}

        return await self.layer.db.run(count)

    def check_enabled(self) -> None:
        if not self.enabled:
            raise AgentError.unavailable(
                "agent memory is disabled on this server",
                hint="set HATIDATA_MEMORY_ENABLED=true and restart",
            )

    # ---- embedding pipeline -------------------------------------------------------

    def queue_embeddings(self, rows: list[tuple[str, int, str, str, str]]) -> None:
        """Queue new memories (memory_id, seq, org, agent, content) for the pump."""
        if self.embedder is not None:
            for r in rows:
                self._enqueue(EmbedJob(*r))

    def _enqueue(self, job: EmbedJob) -> None:
        if job.memory_id in self._queued or self._stopping:
            return
        self._queued.add(job.memory_id)
        self._queue.put_nowait(job)

    async def _pump(self) -> None:
        while True:
            job = await self._queue.get()
            if job is None:
                return
            batch, stop = [job], False
            while len(batch) < PUMP_BATCH and not self._queue.empty():
                nxt = self._queue.get_nowait()
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            fresh = [j for j in batch if j.attempt == 0]
            retries = [j for j in batch if j.attempt > 0]
            try:
                if fresh:
                    await self.embed_jobs(fresh, urgent=False)
                for j in retries:  # one at a time: a poison text must not fail the others
                    await self.embed_jobs([j], urgent=False)
            except Exception:
                log.exception("memory embedding round failed")
            if stop or self._stopping:
                return

    async def embed_jobs(self, jobs: list[EmbedJob], *, urgent: bool) -> None:
        """Embed and store vectors; failures are retried or marked 'failed'."""
        worker = self.layer.semantic.worker
        texts = [j.content for j in jobs]
        try:
            if worker is None:
                raise RuntimeError("no embedding model is loaded")
            if urgent:
                vecs = await worker.embed_now(texts, "passage")
            else:
                vecs = await worker.submit(texts, "passage")
            vecs = np.asarray(vecs, dtype=np.float32)
            if vecs.shape != (len(jobs), self.index.dims) or not np.isfinite(vecs).all():
                raise ValueError(f"the model returned vectors of shape {vecs.shape}")
        except Exception as exc:
            await self._embedding_failed(jobs, exc)
            return
        await self._store_vectors(jobs, vecs)

    async def _store_vectors(self, jobs: list[EmbedJob], vecs: np.ndarray) -> None:
        import pyarrow as pa

        model = self.model_name
        dims = self.index.dims
        ids = [j.memory_id for j in jobs]
        table = pa.table(
            {
                "memory_id": pa.array(ids, pa.string()),
                "embedding": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dims),
            }
        )

        def write(cur: duckdb.DuckDBPyConnection) -> dict[str, Attrs]:
            cur.register("_hati_mem_vecs", table)
            try:
                sel = "SELECT memory_id::UUID FROM _hati_mem_vecs"
                cur.execute(f"DELETE FROM {T_VEC} WHERE memory_id IN ({sel})")
                cur.execute(
                    f"INSERT INTO {T_VEC} SELECT memory_id::UUID, embedding::FLOAT[{dims}]"
                    f" FROM _hati_mem_vecs WHERE memory_id::UUID IN (SELECT memory_id FROM {T_MEM})"
                )
                cur.execute(
                    f"UPDATE {T_MEM} SET has_embedding = true, embedding_status = 'embedded',"
                    " embedding_model = ?, embedding_error = NULL WHERE memory_id IN"
                    f" ({sel})",
                    [model],
                )
                # The rows as they are now (deleted meanwhile: absent), for the index.
                return {
                    r[0]: index_attrs(r)
                    for r in cur.execute(
                        f"SELECT {SELECT_COLUMNS} FROM {T_MEM} WHERE memory_id IN ({sel})"
                    ).fetchall()
                }
            finally:
                cur.unregister("_hati_mem_vecs")

        async with self.write_lock:
            try:
                live = await self.layer.db.transaction(write)
            except Exception as exc:
                await self._embedding_failed(jobs, exc, locked=True)
                return
            for j, vec in zip(jobs, vecs, strict=True):
                self._queued.discard(j.memory_id)
                if j.memory_id in live:  # deleted meanwhile: nothing to index
                    self.index.add(j.org_id, j.agent_id, j.seq, vec, live[j.memory_id])
            if self.shared is not None:
                self.shared.stored(list(live))
        for j, vec in zip(jobs, vecs, strict=True):
            self._resolve(j.memory_id, "embedded" if j.memory_id in live else "deleted")
            if j.memory_id in live:
                self._notify_triggers(j, vec)

    async def _embedding_failed(self, jobs: list[EmbedJob], exc: Exception, locked: bool = False):
        error = f"{type(exc).__name__}: {exc}"[:500]
        give_up = [j for j in jobs if j.attempt + 1 > len(self.retry_delays) or self._stopping]
        retry = [j for j in jobs if j not in give_up]
        log.warning("embedding %d memories failed (%s)", len(jobs), error)
        if self.layer.semantic.worker is None:
            give_up, retry = [], []  # no model: stay 'pending' until one is installed
        for j in retry:
            delay = self.retry_delays[j.attempt]
            j.attempt += 1
            self._queued.discard(j.memory_id)
            self._schedule_retry(j, delay)
        if self._stopping:  # keep 'pending': the next start queues them again
            return
        ids_fail = [j.memory_id for j in give_up]
        ids_retry = [j.memory_id for j in retry]

        def write(cur: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
            # A re-embedded memory keeps its old vector meanwhile: its row is in the index.
            changed = []
            if ids_retry:
                changed += cur.execute(
                    f"UPDATE {T_MEM} SET embedding_attempts = embedding_attempts + 1,"
                    " embedding_error = ? WHERE memory_id IN (SELECT unnest(?::UUID[]))"
                    f" {RETURNING_ROWS}",
                    [error, ids_retry],
                ).fetchall()
            if ids_fail:
                changed += cur.execute(
                    f"UPDATE {T_MEM} SET embedding_attempts = embedding_attempts + 1,"
                    " embedding_status = 'failed', embedding_error = ?"
                    f" WHERE memory_id IN (SELECT unnest(?::UUID[])) {RETURNING_ROWS}",
                    [error, ids_fail],
                ).fetchall()
            return changed

        if ids_fail or ids_retry:
            try:
                if locked:
                    refresh_index(self.index, await self.layer.db.transaction(write))
                else:
                    async with self.write_lock:
                        refresh_index(self.index, await self.layer.db.transaction(write))
            except Exception:
                log.exception("recording an embedding failure failed")
        for j in give_up:
            self._queued.discard(j.memory_id)
            self._resolve(j.memory_id, "failed")

    def _schedule_retry(self, job: EmbedJob, delay: float) -> None:
        handles: list[asyncio.TimerHandle] = []

        def again() -> None:
            self._retry_handles.discard(handles[0])
            self._enqueue(job)

        handles.append(asyncio.get_running_loop().call_later(delay, again))
        self._retry_handles.add(handles[0])

    async def embed_now(self, jobs: list[EmbedJob]) -> None:
        """Embed jobs right away (`wait := true`), a model batch at a time; two batches in
        flight, so one's vectors are written while the model embeds the next."""
        worker = self.layer.semantic.worker
        size = max(1, worker.batch_size if worker is not None else 32)
        chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
        gate = asyncio.Semaphore(2)

        async def one(chunk: list[EmbedJob]) -> None:
            async with gate:
                await self.embed_jobs(chunk, urgent=True)

        await asyncio.gather(*(one(c) for c in chunks))

    async def wait_all(
        self, waiters: dict[str, asyncio.Future[str]], timeout: float = WAIT_TIMEOUT
    ) -> dict[str, str]:
        """Each waiter's outcome; 'pending' for those not done within `timeout`."""
        if waiters:
            await asyncio.wait([asyncio.shield(f) for f in waiters.values()], timeout=timeout)
        return {mid: f.result() if f.done() else "pending" for mid, f in waiters.items()}

    def _resolve(self, memory_id: str, status: str) -> None:
        for f in self._waiters.pop(memory_id, []):
            if not f.done():
                f.set_result(status)

    def add_waiter(self, memory_id: str) -> asyncio.Future[str]:
        """A future resolved with 'embedded', 'failed' or 'deleted' for a queued memory."""
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(memory_id, []).append(fut)
        return fut

    async def wait_result(self, fut: asyncio.Future[str], timeout: float = WAIT_TIMEOUT) -> str:
        """The waiter's outcome, or 'pending' when it takes longer than `timeout`."""
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except TimeoutError:
            return "pending"

    def _notify_triggers(self, job: EmbedJob, vec: np.ndarray) -> None:
        """Hand a newly embedded memory to the semantic triggers (never blocks, never raises)."""
        notify = getattr(getattr(self.layer, "triggers", None), "notify", None)
        if notify is None:
            return
        try:
            who = Identity(job.org_id, job.agent_id)
            result = notify(who, "memory", job.memory_id, job.content, vec)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                task.add_done_callback(_log_task_error)
        except Exception:
            log.exception("trigger notification for memory %s failed", job.memory_id)

    # ---- access tracking ----------------------------------------------------------


def _log_task_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("trigger notification failed: %s", task.exception())
