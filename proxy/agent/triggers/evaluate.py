"""Trigger evaluation: the notification queue, matching notes against the concept matrix,
and firing (fire rows, actions in the same transaction, webhooks in the background).

`TriggerEvaluator` is the evaluation half of `proxy.agent.triggers.service.Triggers` (a mixin: the
state it uses - queue, caches, stats, webhook pool - is created by `Triggers`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from proxy.agent.triggers import shared, webhooks
from proxy.agent.triggers.actions import record_fire
from proxy.agent.triggers.store import DELIVERIES, FIRES, TRIGGERS, parsed_json, utc_now
from proxy.agent.triggers.webhook_guard import WebhookGuard
from proxy.core.identity import Identity
from proxy.db.agent_lake_views import target
from proxy.db.conflicts import again_on_conflict_async

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.triggers")

MAX_INPUT_CHARS = 4096  # matched text kept in fires / inbox / webhook payloads
QUEUE_LIMIT = 10_000  # notifications beyond this are dropped (and counted), never blocking
BATCH_LIMIT = 64


def _clip(text: str) -> str:
    return text if len(text) <= MAX_INPUT_CHARS else text[: MAX_INPUT_CHARS - 1] + "…"


@dataclass(frozen=True)
class Note:
    org_id: str
    agent_id: str
    source: str
    source_id: str
    text: str
    vector: np.ndarray | None


@dataclass
class OrgTriggers:
    """Enabled, embedded triggers of one org: ids, owners, scopes, and the unit-norm matrix."""

    ids: list[str]
    owners: list[str]
    org_wide: np.ndarray  # bool per trigger
    thresholds: np.ndarray
    cooldowns: np.ndarray
    matrix: np.ndarray  # (n, dims) float32

    def watching(self, agent_id: str) -> np.ndarray:
        return self.org_wide | np.array([o == agent_id for o in self.owners], dtype=bool)


def unit_rows(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


class TriggerEvaluator:
    layer: AgentContext
    shared: bool
    webhook_backoff_secs: float
    stats: dict[str, int]
    _cache: dict[str, OrgTriggers]
    _generation: dict[str, int]
    _last_fired: dict[str, float]
    _queue: asyncio.Queue[Note | None] | None
    _loop: asyncio.AbstractEventLoop | None
    _loop_thread: int | None
    _task: asyncio.Task[None] | None
    _inflight: set[asyncio.Task[Any]]
    _http: ThreadPoolExecutor | None

    # ---- the notification path

    def notify(
        self,
        who: Identity,
        source: str,
        source_id: str,
        text: str,
        vector: np.ndarray | None = None,
    ) -> None:
        """New content of `who` (source 'memory' or 'reasoning'): queue it for evaluation.

        Synchronous and non-blocking; safe from the event loop or any thread. `vector`
        is the content's passage embedding when the caller has it (else it is embedded
        here, in the background).
        """
        if self._queue is None or self._task is None or self.layer.semantic.embedder is None:
            return  # not running, or no model: no trigger can exist or match
        if not isinstance(text, str) or not text.strip():
            return
        self.stats["notified"] += 1
        if self._queue.qsize() >= QUEUE_LIMIT:
            self.stats["dropped"] += 1
            log.warning("trigger queue full (%d): dropped %s %s", QUEUE_LIMIT, source, source_id)
            return
        note = Note(who.org_id, who.agent_id, source, str(source_id), text, vector)
        if threading.get_ident() == self._loop_thread:
            self._queue.put_nowait(note)
        else:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._queue.put_nowait, note)

    async def _run(self) -> None:
        assert self._queue is not None
        queue = self._queue
        while True:
            first = await queue.get()
            batch: list[Note] = []
            stopping = first is None
            if first is not None:
                batch.append(first)
            while not stopping and len(batch) < BATCH_LIMIT and not queue.empty():
                item = queue.get_nowait()
                if item is None:
                    stopping = True
                else:
                    batch.append(item)
            try:
                if batch:
                    await self._evaluate(batch)
            except Exception:  # one bad batch must not end evaluation for good
                log.exception("evaluating %d notes against triggers failed", len(batch))
            finally:
                for _ in range(len(batch) + (1 if stopping else 0)):
                    queue.task_done()
            if stopping:
                return

    async def _evaluate(self, batch: list[Note]) -> None:
        dims = self.layer.dims
        work: list[tuple[Note, OrgTriggers, np.ndarray]] = []
        for note in batch:
            org = await self._org(note.org_id)
            if org is None:
                continue
            watching = org.watching(note.agent_id)
            if watching.any():
                work.append((note, org, watching))
        if not work:
            return
        missing = [
            i
            for i, (n, _, _) in enumerate(work)
            if n.vector is None or np.shape(n.vector) != (dims,)
        ]
        vectors: dict[int, np.ndarray] = {}
        if missing:
            embedded = await self.layer.semantic.worker.submit(
                [work[i][0].text for i in missing], "passage"
            )
            vectors = dict(zip(missing, embedded, strict=True))
        for i, (note, org, watching) in enumerate(work):
            vec = vectors.get(i, note.vector)
            vec = unit_rows(np.asarray(vec, dtype=np.float32))
            sims = org.matrix @ vec
            self.stats["evaluated"] += 1
            hits = np.nonzero(watching & (sims >= org.thresholds))[0]
            for k in hits[np.argsort(-sims[hits])]:
                trigger_id = org.ids[k]
                last = self._last_fired.get(trigger_id)
                if last is not None and time.time() - last < org.cooldowns[k]:
                    self.stats["cooldown_skipped"] += 1
                    continue
                await self._fire(trigger_id, note, float(sims[k]))

    async def _org(self, org_id: str) -> OrgTriggers | None:
        cached = self._cache.get(org_id)
        if cached is not None:
            return cached
        generation = self._generation.get(org_id, 0)
        model = self.layer.semantic.model_name

        def load(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
            return cur.execute(
                f"SELECT id, agent_id, scope, threshold, cooldown_secs, last_fired_at, "
                f"concept_embedding FROM {TRIGGERS} WHERE org_id = ? AND enabled "
                "AND event_source = 'semantic' "
                "AND concept_embedding IS NOT NULL AND embedding_model = ? "
                "AND embedding_dimensions = ? ORDER BY created_at",
                [org_id, model, self.layer.dims],
            ).fetchall()

        rows = await self.layer.db.run(load)
        for r in rows:
            if r[5] is not None:  # cooldowns survive restarts
                fired = r[5].timestamp()
                self._last_fired[str(r[0])] = max(self._last_fired.get(str(r[0]), 0.0), fired)
        dims = self.layer.dims
        org = OrgTriggers(
            ids=[str(r[0]) for r in rows],
            owners=[r[1] for r in rows],
            org_wide=np.array([r[2] == "org" for r in rows], dtype=bool),
            thresholds=np.array([r[3] for r in rows], dtype=np.float64),
            cooldowns=np.array([r[4] for r in rows], dtype=np.float64),
            matrix=unit_rows(np.array([r[6] for r in rows], dtype=np.float32).reshape(-1, dims)),
        )
        # Shared through the lake, another proxy may change them at any time: read them
        # for every batch (one lake query) rather than cache.
        if self._generation.get(org_id, 0) == generation and not self.shared:
            self._cache[org_id] = org
        return org

    def _invalidate(self, org_id: str) -> None:
        self._generation[org_id] = self._generation.get(org_id, 0) + 1
        self._cache.pop(org_id, None)

    # ---- firing

    async def _fire(self, trigger_id: str, note: Note, similarity: float) -> None:
        fire_id = str(uuid.uuid4())
        now = utc_now()
        text = _clip(note.text)

        def record(cur: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
            if self.shared:  # claimed in the lake: once across proxies (shared.py)
                row = shared.claim(cur, trigger_id, note.source, note.source_id, now)
            else:
                row = shared.claim_unshared(cur, trigger_id, now)
            if row is None:  # deleted or disabled since the matrix was cached
                return None
            name, owner, threshold, actions, config, concept = row
            actions, config = parsed_json(actions), parsed_json(config)
            fire = {
                "fire_id": fire_id,
                "trigger_id": trigger_id,
                "trigger_name": name,
                "org_id": note.org_id,
                "agent_id": owner,
                "source": note.source,
                "source_id": note.source_id,
                "source_agent_id": note.agent_id,
                "similarity": similarity,
                "threshold": threshold,
                "concept": concept,
                "input_text": text,
                "fired_at": now.isoformat(),
            }
            message = (
                f"Trigger '{name}' fired (similarity {similarity:.3f}) on "
                f"{note.source} {note.source_id}"
            )
            record_fire(cur, {**fire, "fired_at_ts": now}, actions, config, message=message)
            return {"fire": fire, "actions": actions, "config": config}

        self._last_fired[trigger_id] = now.timestamp()
        done = await self._transaction(record)
        if done is None:
            self._last_fired.pop(trigger_id, None)
            self._invalidate(note.org_id)
            return
        self.stats["fired"] += 1
        if "webhook" in done["actions"]:
            self._spawn_webhook(done["fire"], done["config"])

    def _spawn_webhook(self, fire: dict[str, Any], config: dict[str, Any]) -> None:
        """POST a fire's webhook in the background (tracked, so drain/stop wait for it)."""
        task = asyncio.create_task(self._webhook(fire, config))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)

    async def _transaction(self, fn: Any) -> Any:
        # The evaluator and an update_trigger can touch the same row at once: retry the
        # (rare) write-write conflict instead of losing the fire. In the lake another
        # proxy's fire of the same trigger conflicts too (40001): the retry then skips.
        def counted() -> None:
            self.stats["conflicts"] = self.stats.get("conflicts", 0) + 1

        return await again_on_conflict_async(
            lambda: self.layer.db.transaction(fn),
            attempts=12 if self.shared else 3,
            step=0.05,
            on_retry=counted,
        )

    async def _webhook(self, fire: dict[str, Any], config: dict[str, Any]) -> None:
        cfg = webhooks.parse_config(config)
        payload = {"event": "trigger.fired", **fire}

        async def record(a: webhooks.Attempt) -> None:
            self.stats["webhook_attempts"] += 1
            await self.layer.db.run(
                lambda cur: cur.execute(
                    f"INSERT INTO {target(DELIVERIES)} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        str(uuid.uuid4()),
                        fire["org_id"],
                        fire["agent_id"],
                        fire["trigger_id"],
                        fire["fire_id"],
                        cfg.url,
                        a.attempt,
                        a.ok,
                        a.status_code,
                        a.error,
                        a.duration_ms,
                        utc_now(),
                    ],
                )  # fmt: skip
            )

        try:
            assert self._http is not None
            attempts = await webhooks.deliver(
                cfg,
                payload,
                executor=self._http,
                backoff=self.webhook_backoff_secs,
                record=record,
                guard=WebhookGuard.from_config(self.layer.config),
            )
        except Exception as exc:  # recorded, never raised into the evaluator
            log.exception("webhook for fire %s failed", fire["fire_id"])
            attempts = []
            error = f"{type(exc).__name__}: {exc}"
        else:
            error = attempts[-1].error if attempts and not attempts[-1].ok else None
        ok = bool(attempts) and attempts[-1].ok
        if not ok:
            self.stats["webhook_failures"] += 1
        last = attempts[-1] if attempts else None
        details = {
            "actions": ["webhook"],
            "webhook": {
                "url": cfg.url,
                "attempts": len(attempts),
                "status_code": last.status_code if last else None,
                "error": error,
            },
        }

        def finish(cur: duckdb.DuckDBPyConnection) -> None:
            old = cur.execute(f"SELECT details FROM {FIRES} WHERE id = ?", [fire["fire_id"]])
            row = old.fetchone()
            merged = (
                {**(parsed_json(row[0]) or {}), "webhook": details["webhook"]} if row else details
            )
            cur.execute(
                f"UPDATE {target(FIRES)} SET status = ?, details = ? WHERE id = ?",
                ["delivered" if ok else "failed", json.dumps(merged), fire["fire_id"]],
            )

        try:
            await self.layer.db.run(finish)
        except Exception:
            log.exception("recording the webhook outcome of fire %s failed", fire["fire_id"])
