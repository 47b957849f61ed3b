"""The memory service's embedding pump: memories queued after their store are embedded
in batches through the EmbeddingWorker, their vectors and status written in one
transaction, the in-RAM index and the semantic triggers told; failures are retried with
backoff (`RETRY_DELAYS`), then marked 'failed'. `wait := true` embeds at once
(`embed_now`) and waits for the outcome (`add_waiter`, `wait_result`).

A mixin of `Memory` (service.py), which owns the state it uses (queue, waiters, index,
write lock).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from proxy.agent.memory.rows import index_attrs, refresh_index
from proxy.agent.memory.schema import RETURNING_ROWS, SELECT_COLUMNS, T_MEM, T_VEC
from proxy.core.identity import Identity
from proxy.core.sqltext import in_values

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext
    from proxy.agent.memory.index import VectorIndex
    from proxy.agent.memory.index_types import Attrs
    from proxy.agent.memory.shared import SharedMemories

log = logging.getLogger("hatiproxy.agent.memory")

RETRY_DELAYS = (0.5, 2.0, 8.0)  # seconds before attempts 2, 3, 4; then 'failed'
WAIT_TIMEOUT = 30.0  # longest `wait := true` holds a store call
PUMP_BATCH = 256  # memories taken off the queue per embedding round


@dataclass
class EmbedJob:
    """One memory waiting to be embedded."""

    memory_id: str
    seq: int
    org_id: str
    agent_id: str
    content: str
    attempt: int = 0  # failed attempts so far


class EmbedPump:
    """The embedding half of `Memory`."""

    layer: AgentContext
    index: VectorIndex
    write_lock: asyncio.Lock
    shared: SharedMemories | None
    retry_delays: tuple[float, ...]
    _queue: asyncio.Queue[EmbedJob | None]
    _queued: set[str]
    _waiters: dict[str, list[asyncio.Future[str]]]
    _retry_handles: set[asyncio.TimerHandle]
    _stopping: bool

    @property
    def embedder(self) -> Any:
        return self.layer.semantic.embedder

    @property
    def model_name(self) -> str | None:
        e = self.embedder
        return e.model_name if e is not None else None

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
            # persist=False: the vectors table below is where they last; a copy in the
            # embedding cache's table cost 3-7 % of the server's CPU under bench/load.py.
            if urgent:
                vecs = await worker.embed_now(texts, "passage", persist=False)
            else:
                vecs = await worker.submit(texts, "passage", persist=False)
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
            # Filters by id, not joins (proxy/core/sqltext.py `in_values`): a batch is
            # mostly one or a few memories.
            by_id, id_params = in_values("memory_id", ids, "UUID")
            cur.execute(f"DELETE FROM {T_VEC} WHERE {by_id}", id_params)
            cur.execute(
                f"UPDATE {T_MEM} SET has_embedding = true, embedding_status = 'embedded',"
                f" embedding_model = ?, embedding_error = NULL WHERE {by_id}",
                [model, *id_params],
            )
            # The rows as they are now (deleted meanwhile: absent), for the index.
            live = {
                r[0]: index_attrs(r)
                for r in cur.execute(
                    f"SELECT {SELECT_COLUMNS} FROM {T_MEM} WHERE {by_id}", id_params
                ).fetchall()
            }
            if not live:
                return live
            cur.register("_hati_mem_vecs", table)
            try:
                kept, kept_params = in_values("memory_id::UUID", list(live), "UUID")
                cur.execute(
                    f"INSERT INTO {T_VEC} SELECT memory_id::UUID, embedding::FLOAT[{dims}]"
                    f" FROM _hati_mem_vecs WHERE {kept}",
                    kept_params,
                )
                return live
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


def _log_task_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("trigger notification failed: %s", task.exception())
