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
import json
import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from proxy.agent.memory import schema as memory_schema
from proxy.agent.memory.access import AccessTracker
from proxy.agent.memory.args import parse_weights
from proxy.agent.memory.embed_pump import RETRY_DELAYS, EmbedJob, EmbedPump
from proxy.agent.memory.index import VectorIndex
from proxy.agent.memory.journal import MemoryKind
from proxy.agent.memory.pending import PENDING_ROWS_IN_RAM
from proxy.agent.memory.rows import index_attrs, pending_row, refresh_index
from proxy.agent.memory.schema import MEMORY_COLUMNS, RETURNING_ROWS, SELECT_COLUMNS, T_MEM, T_VEC
from proxy.agent.memory.shared import SharedMemories
from proxy.agent.memory.write_batch import WriteBatcher
from proxy.core.errors import AgentError

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.memory")


MAX_CONTENT_BYTES = 1_000_000
MAX_METADATA_BYTES = 100_000
MAX_TYPE_CHARS = 100


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


class Memory(EmbedPump):
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
        # Every memory is deleted some day: the applier gives the rows' storage back.
        layer.compaction.register(self.write_lock, (T_MEM, T_VEC))
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
            SharedMemories(
                layer.db, self.index, self.write_lock, lambda: self.model_name, layer.lake
            )
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
        pending = cur.execute(
            f"SELECT org_id, agent_id, seq FROM {T_MEM} WHERE NOT has_embedding"
        ).fetchall()
        kept: dict[int, tuple[Any, ...]] = {}
        if 0 < len(pending) <= PENDING_ROWS_IN_RAM:  # else search reads them from the table
            kept = {
                r[0]: r[1:]
                for r in cur.execute(
                    f"SELECT seq, {SELECT_COLUMNS} FROM {T_MEM} WHERE NOT has_embedding"
                ).fetchall()
            }
        for org, agent, seq in pending:
            row = kept.get(seq)
            self.index.unembedded.note(org, agent, seq, None if row is None else pending_row(row))
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

    # ---- access tracking ----------------------------------------------------------
