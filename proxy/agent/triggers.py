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
timeout and retries (`proxy.agent.webhooks`); every attempt lands in
webhook_deliveries and the fire's status becomes delivered / failed. Matching never
blocks a store or a query: the worst a slow endpoint does is keep its own task busy.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import math
import re
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from proxy.agent import webhooks
from proxy.agent.base import INTERNAL_SCHEMA, AgentError, Identity

if TYPE_CHECKING:
    from proxy.agent.layer import AgentLayer

log = logging.getLogger("hatiproxy.agent.triggers")

ACTIONS = ("webhook", "agent_notify", "flag_for_review", "write_event")
SCOPES = ("agent", "org")
EVENT_SOURCES = ("semantic",)  # branch lifecycle triggers are not implemented
DEFAULT_ACTION = "flag_for_review"
DEFAULT_COOLDOWN_SECS = 300
MAX_NAME_CHARS = 200
MAX_CONCEPT_CHARS = 4000
MAX_INPUT_CHARS = 4096  # matched text kept in fires / inbox / webhook payloads
QUEUE_LIMIT = 10_000  # notifications beyond this are dropped (and counted), never blocking
BATCH_LIMIT = 64
MODEL_HINT = "run 'hatiproxy model install-default' (offline) to install the default model"

S = INTERNAL_SCHEMA
_T = f"{S}.triggers"
_FIRES = f"{S}.trigger_fires"
_EVENTS = f"{S}.trigger_events"
_FLAGS = f"{S}.trigger_review_flags"
_INBOX = f"{S}.agent_inbox"
_DELIVERIES = f"{S}.webhook_deliveries"

_TRIGGER_FIELDS = (
    "id, org_id, agent_id, name, concept, threshold, actions, action_config, cooldown_secs, "
    "enabled, scope, fire_count, last_fired_at, created_at, updated_at, embedding_model, "
    "embedding_dimensions, event_source"
)
_SECRET_HEADER = re.compile(r"auth|token|key|secret|cookie|signature", re.IGNORECASE)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_INPUT_CHARS else text[: MAX_INPUT_CHARS - 1] + "…"


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


# --- argument checks -------------------------------------------------------------------


def _text_arg(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AgentError.invalid(f"{name} must be a non-empty string")
    value = value.strip()
    if len(value) > limit:
        raise AgentError.invalid(f"{name} is longer than {limit} characters")
    return value


def _threshold_arg(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise AgentError.invalid(f"threshold must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise AgentError.invalid(f"threshold must be between 0 and 1, got {value}")
    return float(value)


def _cooldown_arg(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise AgentError.invalid(f"cooldown_secs must be a whole number, got {value!r}")
    if not 0 <= value <= 10**9:
        raise AgentError.invalid(f"cooldown_secs must be >= 0, got {value}")
    return int(value)


def _actions_arg(actions: Any, action_type: Any) -> list[str] | None:
    """`actions` (REST: a list) and/or `action_type` (MCP: one name, or comma-separated)."""
    names: list[str] = []
    for given, label in ((actions, "actions"), (action_type, "action_type")):
        if given is None:
            continue
        if isinstance(given, str):
            stripped = given.strip()
            if stripped.startswith("["):
                try:
                    given = json.loads(stripped)
                except json.JSONDecodeError:
                    raise AgentError.invalid(f"{label} is not valid JSON") from None
            else:
                given = [p for p in (s.strip() for s in stripped.split(",")) if p]
        if not isinstance(given, list) or not all(isinstance(a, str) for a in given):
            raise AgentError.invalid(f"{label} must be a list of action names")
        names.extend(a.strip().lower() for a in given)
    if actions is None and action_type is None:
        return None
    unknown = [a for a in names if a not in ACTIONS]
    if unknown:
        raise AgentError.invalid(
            f"unknown action {unknown[0]!r}", hint="actions: " + ", ".join(ACTIONS)
        )
    if not names:
        raise AgentError.invalid("a trigger needs at least one action", hint=", ".join(ACTIONS))
    return list(dict.fromkeys(names))


def _config_arg(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise AgentError.invalid("action_config is not valid JSON") from None
    if not isinstance(value, dict):
        raise AgentError.invalid("action_config must be a JSON object")
    return value


def _check_actions(actions: list[str], config: dict[str, Any]) -> None:
    """The actions must be performable with this config (webhook URL, notify target)."""
    if "webhook" in actions:
        try:
            webhooks.parse_config(config)
        except webhooks.WebhookConfigError as exc:
            raise AgentError.invalid(str(exc)) from None
    target = config.get("agent_id")
    if (
        "agent_notify" in actions
        and target is not None
        and (not isinstance(target, str) or not target.strip())
    ):
        raise AgentError.invalid("action_config.agent_id must be a non-empty string")


def _scope_arg(value: Any, who: Identity) -> str:
    scope = (value or "agent").strip().lower() if isinstance(value, str | None) else value
    if scope not in SCOPES:
        raise AgentError.invalid(f"scope must be 'agent' or 'org', got {value!r}")
    if scope == "org" and who.scopes is not None and "trigger:org" not in who.scopes:
        raise AgentError.forbidden("an org-wide trigger needs the trigger:org scope")
    return scope


def _trigger_id_arg(value: Any) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except (ValueError, TypeError):
        raise AgentError.invalid(f"trigger_id must be a UUID, got {value!r:.60}") from None


def _redacted(config: dict[str, Any]) -> dict[str, Any]:
    """action_config as shown to callers: signing secret and credential headers hidden."""
    out = dict(config)
    if out.get("secret"):
        out["secret"] = "***"
    headers = out.get("headers")
    if isinstance(headers, dict):
        out["headers"] = {k: "***" if _SECRET_HEADER.search(k) else v for k, v in headers.items()}
    return out


# --- the service -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Note:
    org_id: str
    agent_id: str
    source: str
    source_id: str
    text: str
    vector: np.ndarray | None


@dataclass
class _OrgTriggers:
    """Enabled, embedded triggers of one org: ids, owners, scopes, and the unit-norm matrix."""

    ids: list[str]
    owners: list[str]
    org_wide: np.ndarray  # bool per trigger
    thresholds: np.ndarray
    cooldowns: np.ndarray
    matrix: np.ndarray  # (n, dims) float32

    def watching(self, agent_id: str) -> np.ndarray:
        return self.org_wide | np.array([o == agent_id for o in self.owners], dtype=bool)


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


class Triggers:
    webhook_backoff_secs = 0.5  # first retry delay; doubles per attempt (tests shorten it)
    stop_grace_secs = 30.0  # how long stop() waits for webhook deliveries in flight

    def __init__(self, layer: AgentLayer) -> None:
        self.layer = layer
        self._cache: dict[str, _OrgTriggers] = {}
        self._generation: dict[str, int] = {}
        self._last_fired: dict[str, float] = {}  # trigger id -> epoch seconds (cooldown)
        self._queue: asyncio.Queue[_Note | None] | None = None
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
        dims = self.layer.dims
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {_T} (
                id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                name VARCHAR NOT NULL, concept VARCHAR NOT NULL,
                concept_embedding FLOAT[{dims}], embedding_model VARCHAR,
                embedding_dimensions INTEGER, threshold DOUBLE NOT NULL, actions JSON NOT NULL,
                action_config JSON NOT NULL, cooldown_secs BIGINT NOT NULL,
                enabled BOOLEAN NOT NULL, scope VARCHAR NOT NULL, event_source VARCHAR NOT NULL,
                fire_count BIGINT NOT NULL, last_fired_at TIMESTAMPTZ,
                created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL)"""
        )
        # A model with other dimensions since last run: the old vectors are meaningless;
        # the concepts are re-embedded in start().
        row = cur.execute(
            "SELECT data_type FROM duckdb_columns() WHERE database_name = current_database() "
            "AND schema_name = ? AND table_name = 'triggers' AND column_name = 'concept_embedding'",
            [S],
        ).fetchone()
        if row is not None and row[0] != f"FLOAT[{dims}]":
            cur.execute(f"ALTER TABLE {_T} DROP COLUMN concept_embedding")
            cur.execute(f"ALTER TABLE {_T} ADD COLUMN concept_embedding FLOAT[{dims}]")
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {_FIRES} (
                id UUID NOT NULL, trigger_id UUID NOT NULL, trigger_name VARCHAR,
                org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL, source VARCHAR,
                source_id VARCHAR, source_agent_id VARCHAR, similarity DOUBLE,
                threshold DOUBLE, input_text VARCHAR, action_taken VARCHAR,
                status VARCHAR NOT NULL, details JSON, fired_at TIMESTAMPTZ NOT NULL)"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {_EVENTS} (
                id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                trigger_id UUID, fire_id UUID, event_type VARCHAR NOT NULL, payload JSON,
                created_at TIMESTAMPTZ NOT NULL)"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {_FLAGS} (
                id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                trigger_id UUID, trigger_name VARCHAR, fire_id UUID, source VARCHAR,
                source_id VARCHAR, source_agent_id VARCHAR, similarity DOUBLE,
                input_text VARCHAR, status VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL)"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {_INBOX} (
                id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                kind VARCHAR NOT NULL, trigger_id UUID, trigger_name VARCHAR, fire_id UUID,
                from_agent_id VARCHAR, source VARCHAR, source_id VARCHAR, similarity DOUBLE,
                message VARCHAR, payload JSON, created_at TIMESTAMPTZ NOT NULL,
                read_at TIMESTAMPTZ)"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {_DELIVERIES} (
                id UUID NOT NULL, org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                trigger_id UUID, fire_id UUID, url VARCHAR, attempt INTEGER, ok BOOLEAN,
                status_code INTEGER, error VARCHAR, duration_ms DOUBLE,
                attempted_at TIMESTAMPTZ NOT NULL)"""
        )
        who = "org_id = getvariable('hatidata_org_id') AND agent_id = getvariable('hatidata_agent_id')"
        views = {
            "_hatidata_triggers": f"SELECT {_TRIGGER_FIELDS} FROM {_T}",
            "_hatidata_trigger_fires": f"SELECT * FROM {_FIRES}",
            "_hatidata_trigger_events": f"SELECT * FROM {_EVENTS}",
            "_hatidata_trigger_review_flags": f"SELECT * FROM {_FLAGS}",
            "_hatidata_agent_inbox": f"SELECT * FROM {_INBOX}",
            "_hatidata_webhook_deliveries": f"SELECT * FROM {_DELIVERIES}",
        }
        for view, select in views.items():
            cur.execute(f"CREATE OR REPLACE VIEW main.{view} AS {select} WHERE {who}")

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
        note = _Note(who.org_id, who.agent_id, source, str(source_id), text, vector)
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
            batch: list[_Note] = []
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

    async def _evaluate(self, batch: list[_Note]) -> None:
        dims = self.layer.dims
        work: list[tuple[_Note, _OrgTriggers, np.ndarray]] = []
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
            vec = _unit(np.asarray(vec, dtype=np.float32))
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

    async def _org(self, org_id: str) -> _OrgTriggers | None:
        cached = self._cache.get(org_id)
        if cached is not None:
            return cached
        generation = self._generation.get(org_id, 0)
        model = self.layer.semantic.model_name

        def load(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
            return cur.execute(
                f"SELECT id, agent_id, scope, threshold, cooldown_secs, last_fired_at, "
                f"concept_embedding FROM {_T} WHERE org_id = ? AND enabled "
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
        org = _OrgTriggers(
            ids=[str(r[0]) for r in rows],
            owners=[r[1] for r in rows],
            org_wide=np.array([r[2] == "org" for r in rows], dtype=bool),
            thresholds=np.array([r[3] for r in rows], dtype=np.float64),
            cooldowns=np.array([r[4] for r in rows], dtype=np.float64),
            matrix=_unit(np.array([r[6] for r in rows], dtype=np.float32).reshape(-1, dims)),
        )
        if self._generation.get(org_id, 0) == generation:  # unchanged while loading
            self._cache[org_id] = org
        return org

    def _invalidate(self, org_id: str) -> None:
        self._generation[org_id] = self._generation.get(org_id, 0) + 1
        self._cache.pop(org_id, None)

    # ---- firing

    async def _fire(self, trigger_id: str, note: _Note, similarity: float) -> None:
        fire_id = str(uuid.uuid4())
        now = _now()
        text = _clip(note.text)

        def record(cur: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
            row = cur.execute(
                f"UPDATE {_T} SET fire_count = fire_count + 1, last_fired_at = ? "
                "WHERE id = ? AND enabled RETURNING name, agent_id, threshold, actions, "
                "action_config, concept",
                [now, trigger_id],
            ).fetchone()
            if row is None:  # deleted or disabled since the matrix was cached
                return None
            name, owner, threshold, actions, config, concept = row
            actions, config = _json(actions), _json(config)
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
            webhook = "webhook" in actions
            details = {"actions": actions}
            cur.execute(
                f"INSERT INTO {_FIRES} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    fire_id,
                    trigger_id,
                    name,
                    note.org_id,
                    owner,
                    note.source,
                    note.source_id,
                    note.agent_id,
                    similarity,
                    threshold,
                    text,
                    ",".join(actions),
                    "pending" if webhook else "done",
                    json.dumps(details),
                    now,
                ],
            )
            if "write_event" in actions:
                cur.execute(
                    f"INSERT INTO {_EVENTS} VALUES (?, ?, ?, ?, ?, 'trigger_fired', ?, ?)",
                    [str(uuid.uuid4()), note.org_id, owner, trigger_id, fire_id,
                     json.dumps(fire, default=str), now],
                )  # fmt: skip
            if "flag_for_review" in actions:
                cur.execute(
                    f"INSERT INTO {_FLAGS} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)",
                    [str(uuid.uuid4()), note.org_id, owner, trigger_id, name, fire_id,
                     note.source, note.source_id, note.agent_id, similarity, text, now],
                )  # fmt: skip
            if "agent_notify" in actions:
                recipient = config.get("agent_id") or owner
                message = (
                    f"Trigger '{name}' fired (similarity {similarity:.3f}) on "
                    f"{note.source} {note.source_id}"
                )
                cur.execute(
                    f"INSERT INTO {_INBOX} VALUES "
                    "(?, ?, ?, 'trigger_fired', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                    [str(uuid.uuid4()), note.org_id, recipient, trigger_id, name, fire_id,
                     owner, note.source, note.source_id, similarity, message,
                     json.dumps(fire, default=str), now],
                )  # fmt: skip
            return {"fire": fire, "actions": actions, "config": config}

        self._last_fired[trigger_id] = now.timestamp()
        done = await self._transaction(record)
        if done is None:
            self._last_fired.pop(trigger_id, None)
            self._invalidate(note.org_id)
            return
        self.stats["fired"] += 1
        if "webhook" in done["actions"]:
            task = asyncio.create_task(self._webhook(done["fire"], done["config"]))
            self._inflight.add(task)
            task.add_done_callback(self._inflight.discard)

    async def _transaction(self, fn: Any) -> Any:
        # The evaluator and an update_trigger can touch the same row at once: retry the
        # (rare) write-write conflict instead of losing the fire.
        for attempt in range(3):
            try:
                return await self.layer.db.transaction(fn)
            except duckdb.TransactionException:
                if attempt == 2:
                    raise
                await asyncio.sleep(0.05 * (attempt + 1))

    async def _webhook(self, fire: dict[str, Any], config: dict[str, Any]) -> None:
        cfg = webhooks.parse_config(config)
        payload = {"event": "trigger.fired", **fire}

        async def record(a: webhooks.Attempt) -> None:
            self.stats["webhook_attempts"] += 1
            await self.layer.db.run(
                lambda cur: cur.execute(
                    f"INSERT INTO {_DELIVERIES} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                        _now(),
                    ],
                )  # fmt: skip
            )

        try:
            assert self._http is not None
            attempts = await webhooks.deliver(
                cfg, payload, executor=self._http, backoff=self.webhook_backoff_secs, record=record
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
            old = cur.execute(f"SELECT details FROM {_FIRES} WHERE id = ?", [fire["fire_id"]])
            row = old.fetchone()
            merged = {**(_json(row[0]) or {}), "webhook": details["webhook"]} if row else details
            cur.execute(
                f"UPDATE {_FIRES} SET status = ?, details = ? WHERE id = ?",
                ["delivered" if ok else "failed", json.dumps(merged), fire["fire_id"]],
            )

        try:
            await self.layer.db.run(finish)
        except Exception:
            log.exception("recording the webhook outcome of fire %s failed", fire["fire_id"])

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
        return [float(x) for x in _unit(np.asarray(vecs[0], dtype=np.float32))]

    async def embed_text(self, text: str) -> np.ndarray:
        self._require_model()
        vecs = await self.layer.semantic.worker.embed_now([text], "passage")
        return _unit(np.asarray(vecs[0], dtype=np.float32))

    async def _reembed_stale(self) -> None:
        """Concepts embedded by another model (or not at all) are embedded with this one."""
        if self.layer.semantic.embedder is None:
            return
        model, dims = self.layer.semantic.model_name, self.layer.dims
        rows = await self.layer.db.run(
            lambda cur: cur.execute(
                f"SELECT id, concept FROM {_T} WHERE concept_embedding IS NULL "
                "OR embedding_model IS DISTINCT FROM ? OR embedding_dimensions IS DISTINCT FROM ?",
                [model, dims],
            ).fetchall()
        )
        if not rows:
            return
        vecs = _unit(await self.layer.semantic.worker.embed_now([r[1] for r in rows], "query"))

        def save(cur: duckdb.DuckDBPyConnection) -> None:
            for (tid, _), vec in zip(rows, vecs, strict=True):
                cur.execute(
                    f"UPDATE {_T} SET concept_embedding = ?, embedding_model = ?, "
                    "embedding_dimensions = ? WHERE id = ?",
                    [vec.tolist(), model, dims, tid],
                )

        await self.layer.db.transaction(save)
        self._cache.clear()
        log.info("re-embedded %d trigger concepts with %s", len(rows), model)

    # ---- owned rows

    async def owned(self, who: Identity, trigger_id: Any) -> dict[str, Any]:
        tid = _trigger_id_arg(trigger_id)
        rows = await self.layer.db.run(lambda cur: _select_triggers(cur, who, "id = ?", [tid]))
        if not rows:
            raise AgentError.not_found(f"trigger {tid} not found")
        return rows[0]


def _select_triggers(
    cur: duckdb.DuckDBPyConnection, who: Identity, where: str = "TRUE", params: list | None = None
) -> list[dict[str, Any]]:
    cur.execute(
        f"SELECT {_TRIGGER_FIELDS} FROM {_T} WHERE org_id = ? AND agent_id = ? AND ({where}) "
        "ORDER BY created_at, name",
        [who.org_id, who.agent_id, *(params or [])],
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _trigger_row(r: dict[str, Any]) -> dict[str, Any]:
    actions = _json(r["actions"])
    return {
        "trigger_id": str(r["id"]),
        "id": str(r["id"]),
        "org_id": r["org_id"],
        "agent_id": r["agent_id"],
        "name": r["name"],
        "concept": r["concept"],
        "threshold": r["threshold"],
        "actions": actions,
        "action_type": actions[0] if actions else None,
        "action_config": _redacted(_json(r["action_config"]) or {}),
        "cooldown_secs": r["cooldown_secs"],
        "enabled": r["enabled"],
        "status": "active" if r["enabled"] else "inactive",
        "scope": r["scope"],
        "fire_count": r["fire_count"],
        "last_fired_at": r["last_fired_at"],
        "created_at": r["created_at"],
        "updated_at": r["updated_at"],
        "embedding_model": r["embedding_model"],
        "embedding_dimensions": r["embedding_dimensions"],
        "event_source": r["event_source"],
    }


def _uuids_as_text(row: dict[str, Any]) -> dict[str, Any]:
    # The same values whichever way a row leaves (SQL, MCP JSON, REST).
    return {k: str(v) if isinstance(v, uuid.UUID) else v for k, v in row.items()}


def _name_taken(cur: duckdb.DuckDBPyConnection, who: Identity, name: str, but: str | None) -> bool:
    row = cur.execute(
        f"SELECT 1 FROM {_T} WHERE org_id = ? AND agent_id = ? AND name = ? "
        "AND id IS DISTINCT FROM ?",
        [who.org_id, who.agent_id, name, but],
    ).fetchone()
    return row is not None


# The agent functions (register_trigger, ...) live in triggers_api; importing it registers them.
from proxy.agent import triggers_api  # noqa: E402, F401
