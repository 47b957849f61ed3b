"""EmbeddingWorker: batches background embedding requests; runs the model off the event loop.

`submit()` is for background work (agent memories, trigger checks): requests queue up and
are embedded together once `batch_size` texts are waiting or `flush_interval_ms` has passed
since the oldest one arrived. `embed_now()` is for a query's own markers: one immediate
batch, never held back by the flush interval. `bulk` is for long work on a thread of its
own (column fills): a plain `embed_batch`, called one model pass at a time.

Queries come first. They run on their own thread, never queued behind a background batch.
Background and bulk passes run on one thread of lower CPU priority (nice +`BULK_NICE`:
Linux applies nice per thread, and within the server's own share of the machine), so a
query's model call and its DuckDB work get the CPU ahead of a fill; and they wait to
start while a query's texts are being embedded (at most `BULK_YIELD_S`: bulk work is
slowed, never stopped). Without this a fresh semantic query took 6-7x its idle time
during a column fill on a busy machine (bench/embed_column.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cache import CachedEmbedder
from .now_batches import NowBatches
from .onnx_embedder import new_run_options, run_options
from .provider import EmbeddingProvider, Mode, check_mode

ENV_BATCH_SIZE = "HATIDATA_EMBEDDING_BATCH_SIZE"
ENV_FLUSH_MS = "HATIDATA_EMBEDDING_FLUSH_INTERVAL_MS"


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError as e:
        raise ValueError(f"{name} must be an integer, not {raw!r}") from e
    if value <= 0:
        raise ValueError(f"{name} must be positive, not {value}")
    return value


@dataclass
class _Request:
    texts: list[str]
    mode: Mode
    persist: bool
    future: asyncio.Future[np.ndarray]


def embed_with(
    provider: EmbeddingProvider, texts: Sequence[str], mode: Mode, persist: bool
) -> np.ndarray:
    """`provider.embed_batch`; persist=False: vectors the caller keeps durably itself (a
    memory's, in its vectors table) are not written to the embedding cache's table too."""
    if not persist and isinstance(provider, CachedEmbedder):
        return provider.embed_batch(texts, mode=mode, persist=False)
    return provider.embed_batch(texts, mode=mode)


_BULK_THREAD = "hati-embed-bulk"
_STOP = None  # queue sentinel: stop after everything queued before it
BULK_YIELD_S = 2.0  # longest a background or bulk pass waits for queries to finish
BULK_RETRIES = 2  # times a bulk pass is ended by queries before it runs to its end anyway
BULK_WASTE = 0.1  # largest share of bulk time thrown away by passes that queries end
BULK_NICE = 10  # added to the bulk thread's nice value (weight ~1/10 of a normal thread)


def _lower_priority() -> None:
    """Initializer of the bulk thread: it alone gets the higher nice value."""
    tid = threading.get_native_id()
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed: as is
        os.setpriority(
            os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BULK_NICE)
        )


class QueryFirst:
    """Counts query embeddings in progress; bulk passes wait for none to be running, and
    a query that starts while a bulk pass runs ends that pass (its ONNX run's terminate
    flag): the pass is run again once the query's texts are embedded. Waiting alone was
    not enough: a pass (16-32 texts) lasts 10x a query's model call, so a query nearly
    always ran beside one, at 2x its idle latency on two cores (bench/embed_column.py).
    Thread-safe: queries enter on event loops and DuckDB threads, bulk passes run on
    worker threads."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queries = 0
        self._runs: set[Any] = set()  # RunOptions of the bulk passes in progress

    def enter(self) -> None:
        with self._cond:
            self._queries += 1
            for options in self._runs:
                options.terminate = True

    def leave(self) -> None:
        with self._cond:
            self._queries -= 1
            if not self._queries:
                self._cond.notify_all()

    @contextlib.contextmanager
    def query(self) -> Iterator[None]:
        """Around a query's own model call (any thread)."""
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def wait_turn(self, limit_s: float = BULK_YIELD_S) -> None:
        with self._cond:
            self._cond.wait_for(lambda: not self._queries, limit_s)

    @contextlib.contextmanager
    def bulk_run(self, interruptible: bool) -> Iterator[Any]:
        """RunOptions for one bulk pass, ended by the next query (None: not
        interruptible)."""
        options = new_run_options() if interruptible else None
        if options is None:
            yield None
            return
        with self._cond:
            options.terminate = self._queries > 0
            self._runs.add(options)
        try:
            yield options
        finally:
            with self._cond:
                self._runs.discard(options)


class BulkEmbedder:
    """The provider as long bulk work should call it (any thread): each call waits for
    the queries in progress, then runs on the worker's low-priority bulk thread, and is
    ended and run again when a query starts meanwhile (at most `BULK_RETRIES` times, and
    only while that has cost under `BULK_WASTE` of its time, so a stream of queries
    slows bulk work but never stops it); call it one model pass
    (<= batch_size texts) at a time."""

    def __init__(self, provider: EmbeddingProvider, gate: QueryFirst) -> None:
        self.provider = provider
        self._gate = gate
        self.executor: ThreadPoolExecutor | None = None  # the worker's, while it runs
        self.restarts = 0  # passes ended by a query and run again
        self.busy_s = 0.0  # time spent in passes, ended ones included
        self.wasted_s = 0.0  # time spent in passes that a query ended

    @property
    def dimensions(self) -> int:
        return self.provider.dimensions

    def embed_batch(
        self, texts: Sequence[str], *, mode: Mode = "passage", persist: bool = True
    ) -> np.ndarray:
        executor = self.executor
        if executor is None or threading.current_thread().name.startswith(_BULK_THREAD):
            return self._pass(texts, mode, persist)
        try:
            job = executor.submit(self._pass, texts, mode, persist)
        except RuntimeError:  # the worker is shutting down: finish on this thread
            return self._pass(texts, mode, persist)
        return job.result()

    def _pass(self, texts: Sequence[str], mode: Mode, persist: bool = True) -> np.ndarray:
        for attempt in range(BULK_RETRIES + 1):
            self._gate.wait_turn()
            # Interruptible only while the work thrown away stays under BULK_WASTE of the
            # bulk time: on a loaded machine a pass outlasts the gap between queries, and
            # ending every one cut a 5,000-row fill to 0.46x the raw model.
            budget = self.wasted_s <= BULK_WASTE * self.busy_s
            started = time.perf_counter()
            try:
                with self._gate.bulk_run(attempt < BULK_RETRIES and budget) as options:
                    try:
                        with run_options(options):
                            return embed_with(self.provider, texts, mode, persist)
                    except Exception:
                        if options is None or not options.terminate:
                            raise  # the model failed, not ended by a query
                self.restarts += 1
                self.wasted_s += time.perf_counter() - started
            finally:
                self.busy_s += time.perf_counter() - started
        raise AssertionError("unreachable: the last attempt is not interruptible")


class EmbeddingWorker:
    def __init__(
        self,
        provider: EmbeddingProvider,
        *,
        batch_size: int | None = None,
        flush_interval_ms: int | None = None,
        threads: int = 1,
    ) -> None:
        self.provider = provider
        self.batch_size = batch_size or _env_int(ENV_BATCH_SIZE, 32)
        self.flush_interval = (flush_interval_ms or _env_int(ENV_FLUSH_MS, 1000)) / 1000.0
        self._threads = max(1, threads)
        self._executor: ThreadPoolExecutor | None = None  # query embeddings
        # Immediate requests arriving together share a model pass (now_batches.py).
        self.now = NowBatches(
            lambda texts, mode, persist: embed_with(self.provider, texts, mode, persist),
            self._threads,
        )
        self._bulk_executor: ThreadPoolExecutor | None = None  # background batches
        self.gate = QueryFirst()
        self.bulk = BulkEmbedder(provider, self.gate)
        self._queue: asyncio.Queue[_Request | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self.batches_run = 0  # model calls made by the background loop

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        if self.running:
            return
        self._executor = ThreadPoolExecutor(self._threads, thread_name_prefix="hati-embed")
        self._bulk_executor = ThreadPoolExecutor(
            1, thread_name_prefix=_BULK_THREAD, initializer=_lower_priority
        )
        self.bulk.executor = self._bulk_executor
        self._queue = asyncio.Queue()
        self._task = asyncio.create_task(self._loop(), name="hatiproxy-embedding-worker")

    async def stop(self) -> None:
        """Finish everything already submitted, then release the thread pool."""
        if self._task is None:
            return
        task, self._task = self._task, None
        assert self._queue is not None
        self._queue.put_nowait(_STOP)  # queued after every earlier request: they all run
        await task
        assert self._executor is not None and self._bulk_executor is not None
        self.bulk.executor = None
        executors = (self._executor, self._bulk_executor)
        self._executor = self._bulk_executor = None
        # waits for a model pass in progress: off the event loop, which must stay free
        # (the server's signal handlers run on it)
        await asyncio.to_thread(lambda: [e.shutdown(wait=True) for e in executors])

    async def __aenter__(self) -> EmbeddingWorker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def submit(
        self, texts: Sequence[str], mode: Mode = "passage", *, persist: bool = True
    ) -> np.ndarray:
        """Background embedding: batched with other requests, flushed by size or interval.
        persist=False: not written to the embedding cache's table (`embed_with`)."""
        check_mode(mode)
        if self._task is None:
            raise RuntimeError("EmbeddingWorker is not running; call start() first")
        if not texts:
            return np.zeros((0, self.provider.dimensions), dtype=np.float32)
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        assert self._queue is not None
        await self._queue.put(_Request(list(texts), mode, persist, future))
        return await future

    async def embed_now(
        self, texts: Sequence[str], mode: Mode = "query", *, persist: bool = True
    ) -> np.ndarray:
        """A statement's own markers: one batch, right away, on the worker's threads
        (with the other immediate requests waiting then, if a pass is running)."""
        check_mode(mode)
        if self._executor is None:
            raise RuntimeError("EmbeddingWorker is not running; call start() first")
        with self.gate.query():  # until the vectors are back, bulk passes hold off
            return await asyncio.wrap_future(
                self.now.submit(self._executor, list(texts), mode, persist)
            )

    async def _loop(self) -> None:
        assert self._queue is not None
        queue = self._queue
        loop = asyncio.get_running_loop()
        stopping = False
        while not stopping:
            first = await queue.get()
            if first is _STOP:
                return
            batch, count = [first], len(first.texts)
            deadline = loop.time() + self.flush_interval
            while count < self.batch_size:
                timeout = deadline - loop.time()
                if timeout <= 0:
                    break
                try:
                    item = await asyncio.wait_for(queue.get(), timeout)
                except TimeoutError:
                    break
                if item is _STOP:  # flush what we hold now instead of waiting
                    stopping = True
                    break
                batch.append(item)
                count += len(item.texts)
            await self._run_batch(batch)

    async def _run_batch(self, batch: list[_Request]) -> None:
        """Embed all requests of one flush: one model call per (mode, persist) present."""
        assert self._bulk_executor is not None
        loop = asyncio.get_running_loop()
        for mode, persist in (
            ("query", True),
            ("passage", True),
            ("query", False),
            ("passage", False),
        ):
            reqs = [
                r for r in batch if r.mode == mode and r.persist == persist and not r.future.done()
            ]
            if not reqs:
                continue
            texts = [t for r in reqs for t in r.texts]
            try:
                vecs = await loop.run_in_executor(
                    self._bulk_executor,
                    lambda texts=texts, mode=mode, persist=persist: self.bulk.embed_batch(
                        texts, mode=mode, persist=persist
                    ),
                )
            except Exception as e:  # the model failed: every waiting caller gets the error
                for r in reqs:
                    if not r.future.done():
                        r.future.set_exception(e)
                continue
            self.batches_run += 1
            start = 0
            for r in reqs:
                if not r.future.done():
                    r.future.set_result(vecs[start : start + len(r.texts)])
                start += len(r.texts)
