"""Semantic triggers: a concept in words that fires actions when new content means it.

A trigger's concept is embedded once (query mode) when it is registered, when its
concept changes, or on re-embed, and kept in `concept_embedding FLOAT[dims]`.
Memory and ledger call `notify(who, source, source_id, text, vector)` for every new
memory / reasoning step; `notify` only enqueues. A background task takes batches off
the queue, embeds texts that came without a vector (passage mode, batched through the
embedding worker), and scores each against a per-org numpy matrix of the enabled
triggers' concept vectors (cached; dropped whenever a trigger of that org changes).

Who sees what: a trigger is owned by the agent that registered it and only its owner
can list, update, test, delete it or read its fires. By default (`scope = 'agent'`)
it watches its owner's own memories and reasoning only, because a fire copies the
matched text into the owner's fire log and inbox, and agents must not read each
other's content. `scope = 'org'` watches every agent of the org (what the REST API's
org-level triggers mean); registering one needs an unrestricted identity or the
`trigger:org` scope. Content of another org never reaches a trigger.

A match (cosine similarity >= threshold) of an enabled trigger outside its cooldown
records a row in trigger_fires, bumps fire_count / last_fired_at, and performs the
actions in the same transaction: write_event (trigger_events), flag_for_review
(trigger_review_flags), agent_notify (agent_inbox of the owner or
action_config.agent_id). A webhook is POSTed afterwards in the background with a
timeout and retries (`proxy.agent.triggers.webhooks`); every attempt lands in
webhook_deliveries and the fire's status becomes delivered / failed. Matching never
blocks a store or a query: the worst a slow endpoint does is keep its own task busy.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from proxy.agent.triggers.evaluate import Note, OrgTriggers, TriggerEvaluator, unit_rows
from proxy.agent.triggers.store import TRIGGERS, own, resolve, select_triggers
from proxy.agent.triggers.store import install as _install
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.db.agent_lake_views import target

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.triggers")

MODEL_HINT = "run 'hatiproxy model install-default' (offline) to install the default model"


class Triggers(TriggerEvaluator):
    webhook_backoff_secs = 0.5  # first retry delay; doubles per attempt (tests shorten it)
    stop_grace_secs = 30.0  # how long stop() waits for webhook deliveries in flight

    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        # With a DuckLake catalog: one set of triggers, fires and inboxes for every proxy
        # (shared.py: a fire is claimed in a lake transaction, so it happens once).
        self.shared = bool(getattr(layer.config, "lake_catalog", ""))
        self._cache: dict[str, OrgTriggers] = {}
        self._generation: dict[str, int] = {}
        self._last_fired: dict[str, float] = {}  # trigger id -> epoch seconds (cooldown)
        self._queue: asyncio.Queue[Note | None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._inflight: set[asyncio.Task[Any]] = set()
        self._http: ThreadPoolExecutor | None = None
        self.stats = {
            "notified": 0,
            "evaluated": 0,
            "fired": 0,
            "cooldown_skipped": 0,
            "dropped": 0,
            "webhook_attempts": 0,
            "webhook_failures": 0,
        }

    # ---- schema

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Create this service's tables and identity views (idempotent)."""
        _install(cur, self.layer.dims, self.shared)

    # ---- lifecycle

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._queue = asyncio.Queue()
        self._http = ThreadPoolExecutor(4, thread_name_prefix="hati-webhook")
        self._task = asyncio.create_task(self._run(), name="hatiproxy-trigger-evaluator")
        try:
            await self._reembed_stale()
        except Exception:  # never keep the server from starting
            log.exception("re-embedding trigger concepts failed")

    async def stop(self) -> None:
        """Evaluate everything queued, then wait (bounded) for webhook deliveries."""
        if self._task is None:
            return
        task, self._task = self._task, None
        assert self._queue is not None
        self._queue.put_nowait(None)  # after every earlier note: they all get evaluated
        await task
        if self._inflight:
            _, pending = await asyncio.wait(set(self._inflight), timeout=self.stop_grace_secs)
            for t in pending:
                t.cancel()
        if self._http is not None:
            self._http.shutdown(wait=False, cancel_futures=True)
            self._http = None

    async def drain(self) -> None:
        """Wait until every note queued so far is evaluated and its webhooks are finished."""
        await asyncio.sleep(0)  # let notes handed over from other threads arrive
        if self._queue is not None and self._task is not None:
            await self._queue.join()
        while self._inflight:
            await asyncio.gather(*list(self._inflight), return_exceptions=True)

    # ---- embeddings

    def _require_model(self) -> None:
        if self.layer.semantic.embedder is None:
            raise AgentError.unavailable(
                "semantic triggers need an embedding model, and none is loaded",
                hint=MODEL_HINT,
            )

    async def embed_concept(self, concept: str) -> list[float]:
        self._require_model()
        vecs = await self.layer.semantic.worker.embed_now([concept], "query")
        return [float(x) for x in unit_rows(np.asarray(vecs[0], dtype=np.float32))]

    async def embed_text(self, text: str) -> np.ndarray:
        self._require_model()
        vecs = await self.layer.semantic.worker.embed_now([text], "passage")
        return unit_rows(np.asarray(vecs[0], dtype=np.float32))

    async def _reembed_stale(self) -> None:
        """Concepts embedded by another model (or not at all) are embedded with this one."""
        if self.layer.semantic.embedder is None:
            return
        model, dims = self.layer.semantic.model_name, self.layer.dims
        rows = await self.layer.db.run(
            lambda cur: cur.execute(
                f"SELECT id, concept FROM {TRIGGERS} WHERE event_source = 'semantic' AND ("
                "concept_embedding IS NULL OR embedding_model IS DISTINCT FROM ? "
                "OR embedding_dimensions IS DISTINCT FROM ?)",
                [model, dims],
            ).fetchall()
        )
        if not rows:
            return
        vecs = unit_rows(await self.layer.semantic.worker.embed_now([r[1] for r in rows], "query"))

        def save(cur: duckdb.DuckDBPyConnection) -> None:
            for (tid, _), vec in zip(rows, vecs, strict=True):
                cur.execute(
                    f"UPDATE {target(TRIGGERS)} SET concept_embedding = ?, embedding_model = ?, "
                    "embedding_dimensions = ? WHERE id = ?",
                    [vec.tolist(), model, dims, tid],
                )

        await self.layer.db.transaction(save)
        self._cache.clear()
        log.info("re-embedded %d trigger concepts with %s", len(rows), model)

    # ---- owned rows

    async def owned(self, who: Identity, trigger_id: Any) -> dict[str, Any]:
        """The caller's trigger named by `trigger_id` (its id or its name)."""

        def load(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            tid = resolve(cur, trigger_id, *own(who))
            return select_triggers(cur, who, "id = ?", [tid])

        rows = await self.layer.db.run(load)
        if not rows:
            raise AgentError.not_found(f"trigger {trigger_id!r} not found")
        return rows[0]
