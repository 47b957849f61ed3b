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
from proxy.agent.base import INTERNAL_SCHEMA, AgentError, Identity, Param, agent_function

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


# --- agent functions -------------------------------------------------------------------

TRIGGER_COLUMNS = (
    ("trigger_id", "UUID"),
    ("id", "UUID"),
    ("org_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("name", "VARCHAR"),
    ("concept", "VARCHAR"),
    ("threshold", "DOUBLE"),
    ("actions", "JSON"),
    ("action_type", "VARCHAR"),
    ("action_config", "JSON"),
    ("cooldown_secs", "BIGINT"),
    ("enabled", "BOOLEAN"),
    ("status", "VARCHAR"),
    ("scope", "VARCHAR"),
    ("fire_count", "BIGINT"),
    ("last_fired_at", "TIMESTAMPTZ"),
    ("created_at", "TIMESTAMPTZ"),
    ("updated_at", "TIMESTAMPTZ"),
    ("embedding_model", "VARCHAR"),
    ("embedding_dimensions", "BIGINT"),
    ("event_source", "VARCHAR"),
)


@agent_function(
    "register_trigger",
    params=[
        Param("name", "VARCHAR"),
        Param("concept", "VARCHAR"),
        Param("threshold", "DOUBLE", 0.7),
        Param("action_type", "VARCHAR", None),
        Param("action_config", "JSON", None),
        Param("actions", "JSON", None),
        Param("cooldown_secs", "BIGINT", DEFAULT_COOLDOWN_SECS),
        Param("enabled", "BOOLEAN", True),
        Param("scope", "VARCHAR", "agent"),
        Param("event_source", "VARCHAR", "semantic"),
    ],
    columns=TRIGGER_COLUMNS,
    scope="trigger:write",
    writes=True,
)
async def register_trigger(
    layer: AgentLayer,
    who: Identity,
    *,
    name: Any,
    concept: Any,
    threshold: Any,
    action_type: Any,
    action_config: Any,
    actions: Any,
    cooldown_secs: Any,
    enabled: Any,
    scope: Any,
    event_source: Any,
) -> list[dict[str, Any]]:
    """Register a semantic trigger: its concept is embedded once, now."""
    name = _text_arg("name", name, MAX_NAME_CHARS)
    concept = _text_arg("concept", concept, MAX_CONCEPT_CHARS)
    threshold = _threshold_arg(0.7 if threshold is None else threshold)
    action_list = _actions_arg(actions, action_type) or [DEFAULT_ACTION]
    config = _config_arg(action_config) or {}
    _check_actions(action_list, config)
    cooldown = _cooldown_arg(DEFAULT_COOLDOWN_SECS if cooldown_secs is None else cooldown_secs)
    scope = _scope_arg(scope, who)
    source = (event_source or "semantic").strip().lower()
    if source not in EVENT_SOURCES:
        raise AgentError.invalid(f"event_source {event_source!r} is not supported: use 'semantic'")
    if enabled is not None and not isinstance(enabled, bool):
        raise AgentError.invalid("enabled must be true or false")
    triggers: Triggers = layer.triggers
    vector = await triggers.embed_concept(concept)
    tid, now = str(uuid.uuid4()), _now()

    def insert(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
        if _name_taken(cur, who, name, None):
            raise AgentError.conflict(f"you already have a trigger named {name!r}")
        cur.execute(
            f"INSERT INTO {_T} (id, org_id, agent_id, name, concept, concept_embedding, "
            "embedding_model, embedding_dimensions, threshold, actions, action_config, "
            "cooldown_secs, enabled, scope, event_source, fire_count, last_fired_at, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?)",
            [tid, who.org_id, who.agent_id, name, concept, vector, layer.semantic.model_name,
             len(vector), threshold, json.dumps(action_list), json.dumps(config), cooldown,
             enabled is not False, scope, source, now, now],
        )  # fmt: skip
        return _select_triggers(cur, who, "id = ?", [tid])

    rows = await layer.db.transaction(insert)
    triggers._invalidate(who.org_id)
    return [_trigger_row(r) for r in rows]


@agent_function(
    "update_trigger",
    params=[
        Param("trigger_id", "UUID"),
        Param("name", "VARCHAR", None),
        Param("concept", "VARCHAR", None),
        Param("threshold", "DOUBLE", None),
        Param("actions", "JSON", None),
        Param("action_type", "VARCHAR", None),
        Param("action_config", "JSON", None),
        Param("cooldown_secs", "BIGINT", None),
        Param("enabled", "BOOLEAN", None),
        Param("scope", "VARCHAR", None),
        Param("reembed", "BOOLEAN", False),
    ],
    columns=TRIGGER_COLUMNS,
    scope="trigger:write",
    writes=True,
)
async def update_trigger(
    layer: AgentLayer,
    who: Identity,
    *,
    trigger_id: Any,
    name: Any,
    concept: Any,
    threshold: Any,
    actions: Any,
    action_type: Any,
    action_config: Any,
    cooldown_secs: Any,
    enabled: Any,
    scope: Any,
    reembed: Any,
) -> list[dict[str, Any]]:
    """Change any of a trigger's settings; a new concept (or reembed) is embedded again."""
    triggers: Triggers = layer.triggers
    current = await triggers.owned(who, trigger_id)
    changes: dict[str, Any] = {}
    if name is not None:
        changes["name"] = _text_arg("name", name, MAX_NAME_CHARS)
    if concept is not None:
        changes["concept"] = _text_arg("concept", concept, MAX_CONCEPT_CHARS)
    if threshold is not None:
        changes["threshold"] = _threshold_arg(threshold)
    new_actions = _actions_arg(actions, action_type)
    new_config = _config_arg(action_config)
    final_actions = new_actions or _json(current["actions"])
    final_config = new_config if new_config is not None else (_json(current["action_config"]))
    _check_actions(final_actions, final_config or {})
    if new_actions is not None:
        changes["actions"] = json.dumps(new_actions)
    if new_config is not None:
        changes["action_config"] = json.dumps(new_config)
    if cooldown_secs is not None:
        changes["cooldown_secs"] = _cooldown_arg(cooldown_secs)
    if enabled is not None:
        if not isinstance(enabled, bool):
            raise AgentError.invalid("enabled must be true or false")
        changes["enabled"] = enabled
    if scope is not None:
        changes["scope"] = _scope_arg(scope, who)
    if "concept" in changes or reembed:
        changes["concept_embedding"] = await triggers.embed_concept(
            changes.get("concept", current["concept"])
        )
        changes["embedding_model"] = layer.semantic.model_name
        changes["embedding_dimensions"] = layer.dims
    tid = str(current["id"])
    changes["updated_at"] = _now()

    def save(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
        if "name" in changes and _name_taken(cur, who, changes["name"], tid):
            raise AgentError.conflict(f"you already have a trigger named {changes['name']!r}")
        sets = ", ".join(f"{k} = ?" for k in changes)
        cur.execute(
            f"UPDATE {_T} SET {sets} WHERE id = ? AND org_id = ? AND agent_id = ?",
            [*changes.values(), tid, who.org_id, who.agent_id],
        )
        return _select_triggers(cur, who, "id = ?", [tid])

    rows = await layer.db.transaction(save)
    triggers._invalidate(who.org_id)
    if not rows:
        raise AgentError.not_found(f"trigger {tid} not found")
    return [_trigger_row(r) for r in rows]


@agent_function(
    "reembed_trigger",
    params=[Param("trigger_id", "UUID")],
    columns=[
        ("trigger_id", "UUID"),
        ("status", "VARCHAR"),
        ("embedding_model", "VARCHAR"),
        ("embedding_dimensions", "BIGINT"),
    ],
    scope="trigger:write",
    writes=True,
)
async def reembed_trigger(layer: AgentLayer, who: Identity, *, trigger_id: Any):
    """Embed a trigger's concept again with the current model (REST re-embed-concept)."""
    rows = await update_trigger(
        layer, who, trigger_id=trigger_id, name=None, concept=None, threshold=None, actions=None,
        action_type=None, action_config=None, cooldown_secs=None, enabled=None, scope=None,
        reembed=True,
    )  # fmt: skip
    r = rows[0]
    return [
        {
            "trigger_id": r["trigger_id"],
            "status": "reembedded",
            "embedding_model": r["embedding_model"],
            "embedding_dimensions": r["embedding_dimensions"],
        }
    ]


@agent_function(
    "list_triggers",
    params=[Param("status", "VARCHAR", None)],
    columns=TRIGGER_COLUMNS,
    scope="trigger:read",
)
async def list_triggers(layer: AgentLayer, who: Identity, *, status: Any) -> list[dict[str, Any]]:
    """The caller's triggers: status 'active', 'inactive' or 'all' (default)."""
    wanted = (status or "all").strip().lower() if isinstance(status, str | None) else status
    where = {
        "all": "TRUE",
        "active": "enabled",
        "enabled": "enabled",
        "inactive": "NOT enabled",
        "disabled": "NOT enabled",
    }.get(wanted)
    if where is None:
        raise AgentError.invalid(f"status must be 'active', 'inactive' or 'all', got {status!r}")
    rows = await layer.db.run(lambda cur: _select_triggers(cur, who, where))
    return [_trigger_row(r) for r in rows]


@agent_function(
    "delete_trigger",
    params=[Param("trigger_id", "UUID")],
    columns=[("trigger_id", "UUID"), ("status", "VARCHAR"), ("deleted", "BOOLEAN")],
    scope="trigger:write",
    writes=True,
)
async def delete_trigger(layer: AgentLayer, who: Identity, *, trigger_id: Any):
    """Delete a trigger (its fire history stays)."""
    tid = _trigger_id_arg(trigger_id)

    def delete(cur: duckdb.DuckDBPyConnection) -> bool:
        row = cur.execute(
            f"DELETE FROM {_T} WHERE id = ? AND org_id = ? AND agent_id = ? RETURNING id",
            [tid, who.org_id, who.agent_id],
        ).fetchone()
        return row is not None

    if not await layer.db.run(delete):
        raise AgentError.not_found(f"trigger {tid} not found")
    layer.triggers._invalidate(who.org_id)
    return [{"trigger_id": tid, "status": "deleted", "deleted": True}]


@agent_function(
    "test_trigger",
    params=[
        Param("trigger_id", "UUID"),
        Param("content", "VARCHAR", None),
        Param("text", "VARCHAR", None),
    ],
    columns=[
        ("trigger_id", "UUID"),
        ("trigger_name", "VARCHAR"),
        ("matched", "BOOLEAN"),
        ("would_fire", "BOOLEAN"),
        ("score", "DOUBLE"),
        ("similarity", "DOUBLE"),
        ("threshold", "DOUBLE"),
        ("model_used", "VARCHAR"),
        ("model_dimensions", "BIGINT"),
    ],
    scope="trigger:read",
)
async def test_trigger(
    layer: AgentLayer, who: Identity, *, trigger_id: Any, content: Any, text: Any
):
    """Cosine similarity of sample text to the trigger's concept; records nothing."""
    sample = _text_arg("content", content if content is not None else text, 10 * 1024 * 1024)
    triggers: Triggers = layer.triggers
    triggers._require_model()
    tid = _trigger_id_arg(trigger_id)

    def load(cur: duckdb.DuckDBPyConnection) -> tuple | None:
        return cur.execute(
            f"SELECT name, threshold, concept_embedding, embedding_model, embedding_dimensions, "
            f"concept FROM {_T} WHERE id = ? AND org_id = ? AND agent_id = ?",
            [tid, who.org_id, who.agent_id],
        ).fetchone()

    row = await layer.db.run(load)
    if row is None:
        raise AgentError.not_found(f"trigger {tid} not found")
    name, threshold, concept_vec, model, dims = row[:5]
    if concept_vec is None or model != layer.semantic.model_name or dims != layer.dims:
        # Embedded by another model: compare like with like, without storing anything.
        concept = np.asarray(await triggers.embed_concept(row[5]), dtype=np.float32)
    else:
        concept = _unit(np.asarray(concept_vec, dtype=np.float32))
    score = float(concept @ await triggers.embed_text(sample))
    matched = score >= threshold
    return [
        {
            "trigger_id": tid,
            "trigger_name": name,
            "matched": matched,
            "would_fire": matched,
            "score": score,
            "similarity": score,
            "threshold": threshold,
            "model_used": layer.semantic.model_name,
            "model_dimensions": layer.dims,
        }
    ]


FIRE_COLUMNS = (
    ("id", "UUID"),
    ("trigger_id", "UUID"),
    ("trigger_name", "VARCHAR"),
    ("org_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("source", "VARCHAR"),
    ("source_id", "VARCHAR"),
    ("source_agent_id", "VARCHAR"),
    ("similarity", "DOUBLE"),
    ("threshold", "DOUBLE"),
    ("input_text", "VARCHAR"),
    ("action_taken", "VARCHAR"),
    ("status", "VARCHAR"),
    ("details", "JSON"),
    ("fired_at", "TIMESTAMPTZ"),
)


@agent_function(
    "trigger_fires",
    params=[
        Param("trigger_id", "UUID", None),
        Param("limit", "BIGINT", 100),
        Param("since", "TIMESTAMPTZ", None),
    ],
    columns=FIRE_COLUMNS,
    scope="trigger:read",
)
async def trigger_fires(
    layer: AgentLayer, who: Identity, *, trigger_id: Any, limit: Any, since: Any
):
    """Fire events of one of the caller's triggers (or of all of them), newest first."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise AgentError.invalid(f"limit must be a positive integer, got {limit!r}")
    where, params = "org_id = ? AND agent_id = ?", [who.org_id, who.agent_id]
    if trigger_id is not None:
        tid = str((await layer.triggers.owned(who, trigger_id))["id"])
        where, params = where + " AND trigger_id = ?", [*params, tid]
    if since is not None:
        if isinstance(since, str):
            try:
                since = dt.datetime.fromisoformat(since)
            except ValueError:
                raise AgentError.invalid(
                    f"since must be an ISO 8601 timestamp: {since!r}"
                ) from None
        where, params = where + " AND fired_at >= ?", [*params, since]
    cols = ", ".join(c for c, _ in FIRE_COLUMNS)

    def load(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        return cur.execute(
            f"SELECT {cols} FROM {_FIRES} WHERE {where} ORDER BY fired_at DESC LIMIT ?",
            [*params, min(limit, 10_000)],
        ).fetchall()

    rows = await layer.db.run(load)
    out = []
    for r in rows:
        row = dict(zip((c for c, _ in FIRE_COLUMNS), r, strict=True))
        row["details"] = _json(row["details"])
        out.append(_uuids_as_text(row))
    return out


INBOX_COLUMNS = (
    ("id", "UUID"),
    ("agent_id", "VARCHAR"),
    ("kind", "VARCHAR"),
    ("trigger_id", "UUID"),
    ("trigger_name", "VARCHAR"),
    ("fire_id", "UUID"),
    ("from_agent_id", "VARCHAR"),
    ("source", "VARCHAR"),
    ("source_id", "VARCHAR"),
    ("similarity", "DOUBLE"),
    ("message", "VARCHAR"),
    ("payload", "JSON"),
    ("created_at", "TIMESTAMPTZ"),
    ("read_at", "TIMESTAMPTZ"),
    ("read", "BOOLEAN"),
)


@agent_function(
    "agent_inbox",
    params=[
        Param("unread_only", "BOOLEAN", False),
        Param("mark_read", "BOOLEAN", False),
        Param("limit", "BIGINT", 100),
    ],
    columns=INBOX_COLUMNS,
    scope="trigger:read",
)
async def agent_inbox(
    layer: AgentLayer, who: Identity, *, unread_only: Any, mark_read: Any, limit: Any
):
    """The caller's notifications (agent_notify), newest first; mark_read marks those returned."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise AgentError.invalid(f"limit must be a positive integer, got {limit!r}")
    cols = [c for c, _ in INBOX_COLUMNS if c != "read"]
    now = _now()

    def load(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
        rows = cur.execute(
            f"SELECT {', '.join(cols)} FROM {_INBOX} WHERE org_id = ? AND agent_id = ? "
            f"{'AND read_at IS NULL' if unread_only else ''} ORDER BY created_at DESC LIMIT ?",
            [who.org_id, who.agent_id, min(limit, 10_000)],
        ).fetchall()
        out = [dict(zip(cols, r, strict=True)) for r in rows]
        unread = [str(r["id"]) for r in out if r["read_at"] is None]
        if mark_read and unread:
            # Bookkeeping only (like access counts): the caller's own inbox rows.
            cur.execute(
                f"UPDATE {_INBOX} SET read_at = ? WHERE org_id = ? AND agent_id = ? "
                "AND read_at IS NULL AND list_contains(?, CAST(id AS VARCHAR))",
                [now, who.org_id, who.agent_id, unread],
            )
            for r in out:
                r["read_at"] = r["read_at"] or now
        return out

    rows = await layer.db.transaction(load)
    for r in rows:
        r["payload"] = _json(r["payload"])
        r["read"] = r["read_at"] is not None
    return [_uuids_as_text(r) for r in rows]
