"""Prometheus metrics: real in-process servers, real clients, the scraped text parsed back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import psycopg
import pytest
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from proxy.app import App as Server
from proxy.core.config import Config
from proxy.telemetry.metrics import CONTENT_TYPE, Metrics

T = TypeVar("T")
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture(autouse=True)
def _hash_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HATIDATA_EMBEDDING_PROVIDER", "hash")
    # Background memory embeddings wait this long: a memory stored without wait stays
    # pending for 2 s (shutdown waits for that batch too: keep it short).
    monkeypatch.setenv("HATIDATA_EMBEDDING_FLUSH_INTERVAL_MS", "2000")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@contextlib.asynccontextmanager
async def serving(tmp: Path) -> AsyncIterator[Server]:
    srv = Server(
        Config(
            port=0,
            mcp_port=0,
            rest_port=0,
            database=":memory:",
            data_dir=str(tmp),
            embedding_provider="hash",
        )
    )
    await srv.start()
    try:
        yield srv
    finally:
        await srv.close()
        srv.engine.close()


async def connect(srv: Server) -> psycopg.AsyncConnection:
    # autocommit: no implicit BEGIN statements in the counts
    return await psycopg.AsyncConnection.connect(
        host="127.0.0.1",
        port=srv.port,
        user="tester",
        dbname="hatidata",
        autocommit=True,
        options="-c hatidata_agent_id=metrics-agent",
    )


async def samples(srv: Server) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families((await srv.scrape_metrics()).decode()):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def val(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def delta(after: Samples, before: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after[key] - before.get(key, 0.0)


async def wait_closed(srv: Server) -> None:
    """The server notices a client's Terminate a moment after the client returns."""
    for _ in range(200):
        if val(await samples(srv), "hatiproxy_connections") == 0:
            return
        await asyncio.sleep(0.01)


# --- connections and statements ---------------------------------------------------------


def test_connections_and_query_outcomes(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with serving(tmp_path) as srv:
            start = await samples(srv)
            assert val(start, "hatiproxy_connections") == 0
            assert val(start, "hatiproxy_connections_total") == 0
            for outcome in ("ok", "error", "cancelled"):
                assert val(start, "hatiproxy_queries_total", outcome=outcome) == 0
            assert val(start, "hatiproxy_query_duration_seconds_count") == 0

            a = await connect(srv)
            b = await connect(srv)
            now = await samples(srv)
            assert val(now, "hatiproxy_connections") == 2
            assert val(now, "hatiproxy_connections_total") == 2

            await a.execute("SELECT 1")  # simple protocol
            assert await (await a.execute("SELECT %s::int + 1", (41,))).fetchone() == (42,)
            await a.execute("CREATE TABLE t (i INTEGER); INSERT INTO t VALUES (1), (2)")  # 2
            with pytest.raises(psycopg.errors.UndefinedTable):
                await a.execute("SELECT * FROM no_such_table")
            with pytest.raises(psycopg.Error, match="boom"):  # fails in Describe (extended)
                await a.execute("SELECT error(%s)", ("boom",))
            with pytest.raises(psycopg.Error, match="boom"):  # fails in Execute (simple)
                await a.execute("SELECT error('boom')")
            with pytest.raises(psycopg.errors.SyntaxError):  # DuckDB's parser finds it
                await a.execute("SELEC 1")

            # A CancelRequest interrupts b's statement (and arrives on a connection of its own).
            running = asyncio.create_task(b.execute("SELECT max(x) FROM range(100000000000) r(x)"))
            await asyncio.sleep(0.5)
            assert not running.done()
            await b.cancel_safe()
            with pytest.raises(psycopg.errors.QueryCanceled):
                await running
            await b.execute("SELECT 2")  # the connection still works

            after = await samples(srv)
            assert delta(after, now, "hatiproxy_queries_total", outcome="ok") == 5
            assert delta(after, now, "hatiproxy_queries_total", outcome="error") == 4
            assert delta(after, now, "hatiproxy_queries_total", outcome="cancelled") == 1
            assert delta(after, now, "hatiproxy_query_duration_seconds_count") == 10
            # The cancelled statement ran for at least the half second before the cancel.
            assert delta(after, now, "hatiproxy_query_duration_seconds_sum") >= 0.5
            assert delta(after, now, "hatiproxy_query_duration_seconds_bucket", le="0.25") <= 9
            assert val(after, "hatiproxy_query_duration_seconds_bucket", le="+Inf") == 10
            assert val(after, "hatiproxy_connections_total") == 3  # + the cancel request

            await a.close()
            await b.close()
            await wait_closed(srv)
            end = await samples(srv)
            assert val(end, "hatiproxy_connections") == 0
            assert val(end, "hatiproxy_connections_total") == 3

    run(scenario())


def test_a_row_limited_portal_counts_once(tmp_path: Path) -> None:
    """asyncpg's cursor fetches in Execute steps of `prefetch` rows: still one statement."""

    async def scenario() -> None:
        async with serving(tmp_path) as srv:
            conn = await asyncpg.connect(
                host="127.0.0.1", port=srv.port, user="tester", database="hatidata"
            )
            try:
                before = await samples(srv)
                async with conn.transaction():  # BEGIN ... COMMIT: two statements
                    rows = [r[0] async for r in conn.cursor("SELECT * FROM range(10)", prefetch=3)]
                assert rows == list(range(10))
                after = await samples(srv)
            finally:
                await conn.close()
            assert delta(after, before, "hatiproxy_queries_total", outcome="ok") == 3
            assert delta(after, before, "hatiproxy_query_duration_seconds_count") == 3
            assert delta(after, before, "hatiproxy_queries_total", outcome="error") == 0

    run(scenario())


# --- embeddings -------------------------------------------------------------------------


def test_embedding_cache_and_model_calls(tmp_path: Path) -> None:
    query = "SELECT id FROM tickets WHERE semantic_match(body, 'refund', 0.1) ORDER BY id"

    async def scenario() -> None:
        async with serving(tmp_path) as srv:
            conn = await connect(srv)
            await conn.execute("CREATE TABLE tickets (id INTEGER, body VARCHAR)")
            await conn.execute(
                "INSERT INTO tickets VALUES (1, 'please refund me'), (2, 'the weather'),"
                " (3, 'billing question')"
            )
            before = await samples(srv)
            assert val(before, "hatiproxy_embedding_cache_hit_ratio") == 0

            await conn.execute(query)
            first = await samples(srv)
            # 'refund' (the query marker) and the 3 bodies are new: 4 misses, in 2 model
            # calls (the marker batch and the column UDF's chunk).
            assert delta(first, before, "hatiproxy_embedding_cache_misses_total") == 4
            assert delta(first, before, "hatiproxy_embedding_cache_hits_total") == 0
            assert delta(first, before, "hatiproxy_embedding_batches_total") == 2
            assert delta(first, before, "hatiproxy_embedding_texts_total") == 4
            assert delta(first, before, "hatiproxy_embedding_batch_duration_seconds_count") == 2

            await conn.execute(query)
            second = await samples(srv)
            assert delta(second, first, "hatiproxy_embedding_cache_hits_total") == 4
            assert delta(second, first, "hatiproxy_embedding_cache_misses_total") == 0
            assert delta(second, first, "hatiproxy_embedding_batches_total") == 0
            hits = val(second, "hatiproxy_embedding_cache_hits_total")
            misses = val(second, "hatiproxy_embedding_cache_misses_total")
            assert hits == 4 and misses == 4
            assert val(second, "hatiproxy_embedding_cache_hit_ratio") == pytest.approx(0.5)
            await conn.close()

    run(scenario())


# --- agent memories ---------------------------------------------------------------------


def test_memory_gauges_follow_the_table(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with serving(tmp_path) as srv:
            conn = await connect(srv)
            start = await samples(srv)
            for status in ("embedded", "pending", "failed"):
                assert val(start, "hatiproxy_agent_memories", status=status) == 0

            for text in ("the board meets on Thursday", "the budget is due in May"):
                cur = await conn.execute(
                    "SELECT embedding_status FROM store_memory(%s, wait := true)", (text,)
                )
                assert await cur.fetchone() == ("embedded",)
            # Without wait: queued for the background pump, which waits for its flush interval.
            cur = await conn.execute("SELECT has_embedding FROM store_memory('lunch at noon')")
            assert await cur.fetchone() == (False,)

            now = await samples(srv)
            assert val(now, "hatiproxy_agent_memories", status="embedded") == 2
            assert val(now, "hatiproxy_agent_memories", status="pending") == 1
            assert val(now, "hatiproxy_agent_memories", status="failed") == 0

            for _ in range(200):  # the pump embeds it after the flush interval
                now = await samples(srv)
                if val(now, "hatiproxy_agent_memories", status="embedded") == 3:
                    break
                await asyncio.sleep(0.05)
            assert val(now, "hatiproxy_agent_memories", status="embedded") == 3
            assert val(now, "hatiproxy_agent_memories", status="pending") == 0

            # A failure the embedding pump records; the gauge reads whatever the table says.
            def fail_one(cur: Any) -> None:
                cur.execute(
                    "UPDATE hatidata_internal.agent_memory SET embedding_status = 'failed'"
                    " WHERE content = 'lunch at noon'"
                )

            await srv.agent.db.run(fail_one)
            end = await samples(srv)
            assert val(end, "hatiproxy_agent_memories", status="embedded") == 2
            assert val(end, "hatiproxy_agent_memories", status="failed") == 1
            await conn.close()

    run(scenario())


# --- HTTP, registries, format -----------------------------------------------------------


def test_http_requests_and_separate_registries(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with serving(tmp_path / "one") as one, serving(tmp_path / "two") as two:
            one.metrics.observe_http("rest", 200)
            one.metrics.observe_http("rest", 200)
            one.metrics.observe_http("mcp", "404")
            with pytest.raises(ValueError, match="interface"):
                one.metrics.observe_http("grpc", 200)
            conn = await connect(one)
            await conn.execute("SELECT 1")

            first, second = await samples(one), await samples(two)
            assert val(first, "hatiproxy_http_requests_total", interface="rest", status="200") == 2
            assert val(first, "hatiproxy_http_requests_total", interface="mcp", status="404") == 1
            assert val(first, "hatiproxy_connections") == 1
            assert val(first, "hatiproxy_queries_total", outcome="ok") == 1
            # The other server in this process saw none of it.
            assert not any(name == "hatiproxy_http_requests_total" for name, _ in second)
            assert val(second, "hatiproxy_connections") == 0
            assert val(second, "hatiproxy_queries_total", outcome="ok") == 0
            await conn.close()

    run(scenario())


def test_text_format_and_content_type() -> None:
    assert CONTENT_TYPE == CONTENT_TYPE_LATEST
    metrics = Metrics()
    metrics.connection_opened()
    body = generate_latest(metrics.registry).decode()
    # The gauge and the counter are separate series despite sharing a stem.
    assert "# TYPE hatiproxy_connections gauge\nhatiproxy_connections 1.0\n" in body
    assert "# TYPE hatiproxy_connections_total counter\nhatiproxy_connections_total 1.0\n" in body
    metrics.connection_closed()
    assert "\nhatiproxy_connections 0.0\n" in generate_latest(metrics.registry).decode()
