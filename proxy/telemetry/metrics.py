"""Prometheus metrics of one Server: wire connections, statements, embeddings, agent memory.

Each Server owns one `Metrics` with its own CollectorRegistry (never the global default:
several servers may live in one process, as in the tests). Hot paths only bump counters
through small observer hooks (Runner.observer, CachedEmbedder.observer, `observe_http`);
the DuckDB-backed gauges are refreshed by `scrape`, on a worker thread.

    body = await scrape(server)   # Prometheus text format 0.0.4; serve as CONTENT_TYPE
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.metrics_core import Metric

from proxy.wire.errors import PgError

log = logging.getLogger("hatiproxy.metrics")

CONTENT_TYPE = CONTENT_TYPE_LATEST
QUERY_OUTCOMES = ("ok", "error", "cancelled")
MEMORY_STATUSES = ("embedded", "pending", "failed")
HTTP_INTERFACES = ("rest", "mcp")
CANCELED = "57014"  # query_canceled: CancelRequest, statement timeout, client gone
# DuckDB answers many statements in well under a millisecond: start the buckets low.
QUERY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
LAG_BUCKETS = (0.1, 0.25, 0.5, 0.75, 1, 1.5, 2.5, 5, 10, 30, 60, 120)
EMBED_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


# --- the statement hook the Runner calls ---------------------------------------------


class QueryObserver(Protocol):
    def observe_query(self, outcome: str, seconds: float) -> None: ...


class _Portal(Protocol):  # proxy.pgserver.portal.Portal, as far as timing needs it
    busy_s: float
    executed: bool
    done: bool


def query_outcome(exc: BaseException) -> str:
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    return "cancelled" if isinstance(exc, PgError) and exc.sqlstate == CANCELED else "error"


async def timed_statement(
    observer: QueryObserver | None,
    portal: _Portal,
    work: Coroutine[Any, Any, None],
    *,
    execute: bool = False,
) -> None:
    """Run a portal's Describe (execute=False) or Execute step; report the statement once.

    Describe may start a row query and a row-limited Execute may stop early, so time adds
    up on the portal; it is reported when the statement fails or an Execute finishes it.
    """
    started = time.perf_counter()
    outcome: str | None = None
    try:
        await work
        if execute and not (portal.executed and not portal.done):
            outcome = "ok"
    except BaseException as exc:
        outcome = query_outcome(exc)
        raise
    finally:
        portal.busy_s += time.perf_counter() - started
        if outcome is not None:
            if observer is not None:
                observer.observe_query(outcome, portal.busy_s)
            portal.busy_s = 0.0


# --- the metrics -------------------------------------------------------------------


class _Together:
    """Collects metrics whose names prometheus_client's registration check rejects.

    A gauge `x` and a counter `x_total` are distinct series in the text format, but the
    registry reserves `x` for the counter's OpenMetrics family name. A collector without
    describe() is registered unchecked; `Metrics` guarantees the names are distinct.
    """

    def __init__(self, *metrics: Gauge | Counter) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        for metric in self._metrics:
            yield from metric.collect()


class Metrics:
    """One server's metrics; the observer methods are thread-safe (embeddings call them on
    worker threads)."""

    def __init__(self) -> None:
        self.registry = reg = CollectorRegistry()
        self.connections = Gauge(
            "hatiproxy_connections", "Open wire-protocol TCP connections.", registry=None
        )
        self.connections_total = Counter(
            "hatiproxy_connections_total",
            "Wire-protocol TCP connections accepted (cancel requests included).",
            registry=None,
        )
        reg.register(_Together(self.connections, self.connections_total))
        self.queries = Counter(
            "hatiproxy_queries_total",
            "Statements run for wire clients (simple and extended protocol), by outcome.",
            ["outcome"],
            registry=reg,
        )
        self.query_duration = Histogram(
            "hatiproxy_query_duration_seconds",
            "Server time per statement run for wire clients, until its last row is sent.",
            buckets=QUERY_BUCKETS,
            registry=reg,
        )
        self.embedding_batches = Counter(
            "hatiproxy_embedding_batches_total",
            "Embedding model calls (each embeds the batch of texts the cache missed).",
            registry=reg,
        )
        self.embedding_texts = Counter(
            "hatiproxy_embedding_texts_total", "Texts embedded by the model.", registry=reg
        )
        self.embedding_batch_duration = Histogram(
            "hatiproxy_embedding_batch_duration_seconds",
            "Duration of one embedding model call.",
            buckets=EMBED_BUCKETS,
            registry=reg,
        )
        self.cache_hits = Counter(
            "hatiproxy_embedding_cache_hits_total",
            "Embedding lookups served without a model call (LRU, persistent table, in flight).",
            registry=reg,
        )
        self.cache_misses = Counter(
            "hatiproxy_embedding_cache_misses_total",
            "Embedding lookups that needed the model.",
            registry=reg,
        )
        self.cache_hit_ratio = Gauge(
            "hatiproxy_embedding_cache_hit_ratio",
            "hits / (hits + misses) since start; 0 before the first lookup.",
            registry=reg,
        )
        self.cache_hit_ratio.set_function(self._hit_ratio)
        self.cache_committed = Counter(
            "hatiproxy_embedding_cache_committed_total",
            "Embedding cache entries written to its table (the writer thread commits them "
            "behind the model calls).",
            registry=reg,
        )
        self.cache_commit_lag = Histogram(
            "hatiproxy_embedding_cache_commit_lag_seconds",
            "Per cache commit: how long its oldest entry waited between its model call and "
            "the commit (the writer gathers for up to 0.25 s).",
            buckets=LAG_BUCKETS,
            registry=reg,
        )
        self.cache_pending = Gauge(
            "hatiproxy_embedding_cache_pending",
            "Embedding cache entries computed but not yet written to its table.",
            registry=reg,
        )
        self.memories = Gauge(
            "hatiproxy_agent_memories",
            "Agent memories stored (all orgs, retired ones included), by embedding status.",
            ["status"],
            registry=reg,
        )
        self.http_requests = Counter(
            "hatiproxy_http_requests_total",
            "HTTP requests answered, by interface and status code.",
            ["interface", "status"],
            registry=reg,
        )
        # export zeros: rate() needs the series to exist; kept, as labels() per statement
        # (a lock and a key build) was a visible part of a point query's Python time
        self._query_counts = {o: self.queries.labels(o) for o in QUERY_OUTCOMES}
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    def watch_embedder(self, embedder: Any) -> None:
        """Hook a CachedEmbedder (None: semantic SQL is off, nothing to watch)."""
        if embedder is not None:
            embedder.observer = self
            self.cache_pending.set_function(lambda: embedder.pending)

    # --- observers (hot paths) ---------------------------------------------------------

    def connection_opened(self) -> None:
        self.connections.inc()
        self.connections_total.inc()

    def connection_closed(self) -> None:
        self.connections.dec()

    def observe_query(self, outcome: str, seconds: float) -> None:
        counter = self._query_counts.get(outcome)
        (counter or self.queries.labels(outcome)).inc()
        self.query_duration.observe(seconds)

    def observe_cache(self, hits: int, misses: int) -> None:
        with self._lock:
            self._hits += hits
            self._misses += misses
        if hits:
            self.cache_hits.inc(hits)
        if misses:
            self.cache_misses.inc(misses)

    def observe_model_call(self, texts: int, seconds: float) -> None:
        self.embedding_batches.inc()
        self.embedding_texts.inc(texts)
        self.embedding_batch_duration.observe(seconds)

    def observe_cache_commit(self, entries: int, lag_s: float) -> None:
        self.cache_committed.inc(entries)
        self.cache_commit_lag.observe(lag_s)

    def observe_http(self, interface: str, status: int | str) -> None:
        """Count one answered HTTP request; interface is "rest" or "mcp"."""
        if interface not in HTTP_INTERFACES:
            raise ValueError(f"interface must be one of {HTTP_INTERFACES}, not {interface!r}")
        self.http_requests.labels(interface, str(int(status))).inc()

    def _hit_ratio(self) -> float:
        with self._lock:
            total = self._hits + self._misses
            return self._hits / total if total else 0.0

    # --- scrape ------------------------------------------------------------------------

    async def scrape(self, memory_counts: Callable[[], Awaitable[dict[str, int]]]) -> bytes:
        """Prometheus text; `memory_counts` gives the agent memories by embedding status."""
        try:
            counts = await memory_counts()
        except Exception:  # the other metrics still matter (e.g. while shutting down)
            log.warning("metrics: counting agent memories failed", exc_info=True)
            self.memories.clear()  # no stale numbers
        else:
            self.memories.clear()  # a status no row has any more must not linger
            for status in (*MEMORY_STATUSES, *counts):
                self.memories.labels(status).set(counts.get(status, 0))
        return generate_latest(self.registry)
