"""Agent memory: store, the embedding lifecycle, access counts and maintenance (in-process layer).

Hash embedder for behaviour (vectors without meaning); the real model for search
quality lives in test_memory_quality.py.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from agent_support import open_layer, run
from memory_support import A, B, count_rows, sql, status_of, store, until

from proxy.agent.layer import AgentLayer
from proxy.core.errors import AgentError


def test_store_returns_at_once_then_embeds_in_background(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            r = await store(layer, A, "The customer prefers email", importance=0.8)
            assert r["status"] == "stored" and r["deduplicated"] is False
            assert r["has_embedding"] is False and r["embedding_status"] == "pending"
            mid = r["memory_id"]
            await until(lambda: _embedded(layer, mid))
            got = (await layer.call("get_memory", A, memory_id=mid))[0]
            assert got["has_embedding"] is True and got["embedding_model"] == "hash-384"
            assert got["importance"] == 0.8 and got["memory_type"] == "fact"
            assert got["metadata"] == {} and got["confidence"] == 1.0
            assert await count_rows(layer, "agent_memory_vectors") == 1

    run(go())


async def _embedded(layer: AgentLayer, mid: str) -> bool:
    return await status_of(layer, A, mid) == "embedded"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"content": ""}, "content"),
        ({"content": "   "}, "content"),
        ({"content": "x" * 10_000_000}, "at most 1000000 bytes"),
        ({"content": "ok", "importance": 1.5}, "importance"),
        ({"content": "ok", "importance": -0.1}, "importance"),
        ({"content": "ok", "metadata": "not json"}, "metadata"),
        ({"content": "ok", "metadata": "[1, 2]"}, "JSON object"),
        ({"content": "ok", "metadata": [1, 2]}, "JSON object"),
        ({"content": "ok", "memory_type": ""}, "memory_type"),
        ({"content": "ok", "supersedes": "not-a-uuid"}, "UUID"),
        ({"content": "ok", "ttl_seconds": 0}, "ttl_seconds"),
        ({"content": "ok", "expires_at": "2001-01-01T00:00:00Z"}, "past"),
        ({"content": "ok", "supersedes": "00000000-0000-4000-8000-000000000000"}, "not found"),
    ],
)
def test_invalid_store_arguments_write_nothing(
    tmp_path: Path, args: dict[str, Any], message: str
) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            with pytest.raises(AgentError) as err:
                await layer.call("store_memory", A, **args)
            assert message in err.value.message
            assert err.value.sqlstate in ("22023", "42704")
            assert await count_rows(layer) == 0
            assert await count_rows(layer, "agent_memory_vectors") == 0

    run(go())


def test_other_invalid_arguments(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            with pytest.raises(AgentError, match="content"):
                await layer.call("store_memory", A)  # missing
            for bad in (0, -3):
                with pytest.raises(AgentError, match="top_k"):
                    await layer.call("search_memory", A, ["q"], top_k=bad)
            with pytest.raises(AgentError, match="query"):
                await layer.call("search_memory", A, [""])
            with pytest.raises(AgentError, match="min_importance"):
                await layer.call("search_memory", A, ["q"], min_importance=2)
            unknown = "00000000-0000-4000-8000-000000000000"
            for name in ("get_memory", "delete_memory", "reembed_memory"):
                with pytest.raises(AgentError) as err:
                    await layer.call(name, A, memory_id=unknown)
                assert err.value.code == "not_found" and err.value.http_status == 404
                with pytest.raises(AgentError) as err:
                    await layer.call(name, A, memory_id="nope")
                assert err.value.code == "invalid_argument"
            with pytest.raises(AgentError, match="limit"):
                await layer.call("list_memories", A, limit=0)
            with pytest.raises(AgentError, match="rate"):
                await layer.call("decay_memories", A, rate=1.5)

    run(go())


def test_dedup_by_content_per_agent(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            first = await store(layer, A, "Revenue grew 15% in Q4")
            again = await store(layer, A, "Revenue grew 15% in Q4", importance=0.9)
            assert again["memory_id"] == first["memory_id"] and again["deduplicated"] is True
            other = await store(layer, B, "Revenue grew 15% in Q4")
            assert other["memory_id"] != first["memory_id"] and other["deduplicated"] is False
            near = await store(layer, A, "Revenue grew 15% in Q4.")
            assert near["deduplicated"] is False
            assert await count_rows(layer) == 3

    run(go())


def test_supersede_retires_the_old_memory(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            old = await store(layer, A, "My preferred IDE is Cursor", wait=True)
            new = await store(
                layer, A, "My preferred IDE is VS Code", supersedes=old["memory_id"], wait=True
            )
            assert new["superseded_id"] == old["memory_id"]
            got = (await layer.call("get_memory", A, memory_id=old["memory_id"]))[0]
            assert got["conflict_status"] == "superseded"
            assert got["superseded_by_id"] == new["memory_id"]
            hits = await layer.call("search_memory", A, ["preferred IDE"])
            assert [h["memory_id"] for h in hits] == [new["memory_id"]]
            assert hits[0]["conflict_status"] == "none"
            audit = await layer.call("search_memory", A, ["preferred IDE"], include_superseded=True)
            assert {h["memory_id"] for h in audit} == {old["memory_id"], new["memory_id"]}
            listed = await layer.call("list_memories", A)
            assert [m["memory_id"] for m in listed] == [new["memory_id"]]
            listed = await layer.call("list_memories", A, include_superseded=True)
            assert len(listed) == 2
            # Retrying the same correction is idempotent; a different one conflicts.
            again = await store(
                layer, A, "My preferred IDE is VS Code", supersedes=old["memory_id"]
            )
            assert again["memory_id"] == new["memory_id"] and again["deduplicated"]
            with pytest.raises(AgentError) as err:
                await store(layer, A, "My preferred IDE is Zed", supersedes=old["memory_id"])
            assert err.value.code == "conflict"
            assert await count_rows(layer) == 2  # the refused correction wrote nothing
            # Another agent's memory cannot be superseded (it does not exist for B).
            with pytest.raises(AgentError) as err:
                await store(layer, B, "hijack", supersedes=new["memory_id"])
            assert err.value.code == "not_found"
            # Deleting the replacement clears the pointer but not the status.
            await layer.call("delete_memory", A, memory_id=new["memory_id"])
            got = (await layer.call("get_memory", A, memory_id=old["memory_id"]))[0]
            assert got["conflict_status"] == "superseded" and got["superseded_by_id"] is None

    run(go())


def test_wait_makes_the_memory_searchable_on_return(tmp_path: Path) -> None:
    async def go() -> None:
        # A long flush interval: without wait the memory would not be embedded for 5 s.
        async with open_layer(tmp_path, embedding_flush_interval_ms=5000) as layer:
            r = await store(layer, A, "Quarterly board meeting moved to Friday", wait=True)
            assert r["has_embedding"] is True and r["embedding_status"] == "embedded"
            hits = await layer.call("search_memory", A, ["board meeting"], top_k=1)
            assert hits[0]["memory_id"] == r["memory_id"] and hits[0]["score_kind"] == "hybrid"

    run(go())


def test_failed_embedding_is_retried_then_marked_failed_and_found_by_keyword(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            layer.memory.retry_delays = (0.05, 0.05, 0.05)
            worker = layer.semantic.worker
            real_submit = worker.submit
            calls: dict[str, int] = {}

            async def flaky(texts: list[str], mode: str = "passage", **kw: Any) -> Any:
                for t in texts:
                    calls[t] = calls.get(t, 0) + 1
                if any("POISON" in t for t in texts):
                    raise RuntimeError("model exploded")
                if any("flaky" in t for t in texts) and calls["a flaky text"] == 1:
                    raise RuntimeError("transient")
                return await real_submit(texts, mode, **kw)

            worker.submit = flaky
            bad = await store(layer, A, "POISON pill about invoices")
            good = await store(layer, A, "a flaky text")
            fine = await store(layer, A, "an ordinary memory")
            await until(lambda: _status_is(layer, bad["memory_id"], "failed"))
            await until(lambda: _status_is(layer, good["memory_id"], "embedded"))
            await until(lambda: _status_is(layer, fine["memory_id"], "embedded"))
            assert calls["POISON pill about invoices"] == 4  # 1 + 3 retries
            row = (await layer.call("get_memory", A, memory_id=bad["memory_id"]))[0]
            assert row["has_embedding"] is False and "model exploded" in row["embedding_error"]
            hits = await layer.call("search_memory", A, ["invoices"])
            kinds = {h["memory_id"]: h["score_kind"] for h in hits}
            assert kinds[bad["memory_id"]] == "keyword"
            stats = (await layer.call("memory_embedding_stats", A))[0]
            assert (stats["total_failed"], stats["total_embedded"]) == (1, 2)
            # Re-embedding after the model is fixed succeeds.
            worker.submit = real_submit
            out = await layer.call("reembed_memory", A, all_failed=True, wait=True)
            assert out == [{"memory_id": bad["memory_id"], "status": "embedded"}]

    run(go())


async def _status_is(layer: AgentLayer, mid: str, status: str) -> bool:
    return await status_of(layer, A, mid) == status


def test_pending_embeddings_complete_after_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "mem.duckdb")

    async def first() -> list[str]:
        async with open_layer(tmp_path, database=db) as layer:
            layer.memory.stop_timeout = 0.2

            async def never(texts: list[str], mode: str = "passage", **kw: Any) -> Any:
                await asyncio.Event().wait()

            layer.semantic.worker.submit = never
            ids = [(await store(layer, A, f"pending memory {i}"))["memory_id"] for i in range(5)]
            done = await store(layer, A, "embedded before the stop", wait=True)
            assert done["embedding_status"] == "embedded"
            return [*ids, done["memory_id"]]

    async def second(ids: list[str]) -> None:
        async with open_layer(tmp_path, database=db) as layer:
            await until(lambda: _all_embedded(layer, ids))
            hits = await layer.call("search_memory", A, ["embedded before the stop"], top_k=1)
            assert hits[0]["memory_id"] == ids[-1] and hits[0]["score_kind"] == "hybrid"
            assert layer.memory.index.count("local", "agent-a") == 6
            # The main-schema view and the vectors agree after the restart.
            assert await count_rows(layer, "agent_memory_vectors") == 6

    ids = run(first())
    run(second(ids))


def test_memory_vectors_skip_the_cache_table_and_are_found_after_restart(tmp_path: Path) -> None:
    """A memory's vector is durable in agent_memory_vectors: the embedding cache's table
    gets no second copy (that write cost 3-7 % of the server's CPU under bench/load.py),
    and a restarted server still finds the memory by its vector."""
    db = str(tmp_path / "mem.duckdb")
    cached = "SELECT count(*) FROM _hatidata_embedding_cache"
    texts = ["The warehouse in Lyon ships on Tuesdays", "Invoices are approved by the finance lead"]

    async def first() -> list[str]:
        async with open_layer(tmp_path, database=db) as layer:
            bg = await store(layer, A, texts[0])
            now = await store(layer, A, texts[1], wait=True)
            await until(lambda: _embedded(layer, bg["memory_id"]))
            cache = layer.semantic.embedder
            await asyncio.to_thread(cache.flush)
            assert cache.misses == 2 and cache.committed == 0 and cache.pending == 0
            assert (await sql(layer, cached))[0][0] == 0
            # A search's query text still goes to the table: what the table is for.
            await layer.call("search_memory", A, ["who approves invoices"], top_k=1)
            await asyncio.to_thread(cache.flush)
            assert (await sql(layer, cached))[0][0] == 1
            return [bg["memory_id"], now["memory_id"]]

    async def second(ids: list[str]) -> None:
        async with open_layer(tmp_path, database=db) as layer:
            assert layer.memory.index.count("local", "agent-a") == 2
            for mid, text in zip(ids, texts, strict=True):
                hits = await layer.call("search_memory", A, [text], top_k=1)
                assert hits[0]["memory_id"] == mid and hits[0]["score_kind"] == "hybrid"

    run(second(run(first())))


async def _all_embedded(layer: AgentLayer, ids: list[str]) -> bool:
    for mid in ids:
        if await status_of(layer, A, mid) != "embedded":
            return False
    return True


def test_access_counts_are_batched_and_flushed(tmp_path: Path) -> None:
    db = str(tmp_path / "acc.duckdb")

    async def go() -> str:
        async with open_layer(
            tmp_path, database=db, access_tracker_flush_interval_secs=3600
        ) as layer:
            mid = (await store(layer, A, "watched memory about tariffs", wait=True))["memory_id"]
            for _ in range(3):
                await layer.call("search_memory", A, ["tariffs"])
            await layer.call("get_memory", A, memory_id=mid)
            stored = await sql(
                layer,
                "SELECT access_count FROM hatidata_internal.agent_memory WHERE memory_id = ?",
                [mid],
            )
            assert stored == [(0,)]  # not written yet: no write per read
            got = (await layer.call("get_memory", A, memory_id=mid))[0]
            assert got["access_count"] == 5 and got["last_accessed"] is not None
            assert await layer.memory.access.flush() == 1
            stored = await sql(
                layer,
                "SELECT access_count FROM hatidata_internal.agent_memory WHERE memory_id = ?",
                [mid],
            )
            assert stored == [(5,)]
            await layer.call("search_memory", A, ["tariffs"])  # flushed by stop()
            return mid

    async def after(mid: str) -> None:
        async with open_layer(tmp_path, database=db, access_tracker_flush_interval_secs=1) as layer:
            got = (await layer.call("get_memory", A, memory_id=mid))[0]
            assert got["access_count"] == 7  # 6 + this get, still unflushed
            await asyncio.sleep(1.5)  # the periodic flush
            stored = await sql(
                layer,
                "SELECT access_count FROM hatidata_internal.agent_memory WHERE memory_id = ?",
                [mid],
            )
            assert stored == [(7,)]

    mid = run(go())
    run(after(mid))


def test_delete_removes_row_and_vector(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            mid = (await store(layer, A, "to be forgotten", wait=True))["memory_id"]
            assert await count_rows(layer, "agent_memory_vectors") == 1
            out = await layer.call("delete_memory", A, memory_id=mid)
            assert out == [{"deleted": True, "memory_id": mid}]
            assert await count_rows(layer) == 0
            assert await count_rows(layer, "agent_memory_vectors") == 0
            assert await layer.call("search_memory", A, ["forgotten"]) == []
            with pytest.raises(AgentError):
                await layer.call("delete_memory", A, memory_id=mid)

    run(go())


def test_expiry_hides_then_expire_deletes(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            short = await store(layer, A, "temporary parking code 1234", ttl_seconds=1, wait=True)
            keep = await store(layer, A, "permanent parking rule", wait=True)
            assert len(await layer.call("search_memory", A, ["parking"])) == 2
            await asyncio.sleep(1.1)
            hits = await layer.call("search_memory", A, ["parking"])
            assert [h["memory_id"] for h in hits] == [keep["memory_id"]]
            with pytest.raises(AgentError):
                await layer.call("get_memory", A, memory_id=short["memory_id"])
            assert (await layer.call("expire_memories", A, dry_run=True))[0]["expired"] == 1
            assert await count_rows(layer) == 2  # dry run changed nothing
            assert (await layer.call("expire_memories", A))[0] == {"expired": 1, "dry_run": False}
            assert await count_rows(layer) == 1
            assert await count_rows(layer, "agent_memory_vectors") == 1

    run(go())


def test_eviction_rules(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            ids = {}
            for name, imp in [("old-low", 0.1), ("old-high", 0.9), ("new-low", 0.1), ("weak", 0.5)]:
                ids[name] = (await store(layer, A, name, importance=imp))["memory_id"]
            for i in range(3):
                ids[f"cap{i}"] = (await store(layer, A, f"cap{i}", importance=0.2 + i / 10))[
                    "memory_id"
                ]
            other = (await store(layer, B, "old-low", importance=0.1))["memory_id"]
            old = dt.datetime.now(dt.UTC) - dt.timedelta(days=40)
            await sql(
                layer,
                "UPDATE hatidata_internal.agent_memory SET created_at = ?"
                " WHERE content LIKE 'old-%'",
                [old],
            )
            await sql(
                layer,
                "UPDATE hatidata_internal.agent_memory SET confidence = 0.05 WHERE content = 'weak'",
            )
            dry = (await layer.call("evict_memories", A, max_per_agent=3, dry_run=True))[0]
            assert dry == {
                "evicted": 4,
                "by_age": 1,
                "by_confidence": 1,
                "by_cap": 2,
                "dry_run": True,
            }
            assert await count_rows(layer) == 8
            out = (await layer.call("evict_memories", A, max_per_agent=3))[0]
            assert out["evicted"] == 4
            left = {m["content"] for m in await layer.call("list_memories", A)}
            # Kept: the 3 most important of the rest (old-high 0.9, cap2 0.4, cap1 0.3).
            assert left == {"old-high", "cap2", "cap1"}
            # B's identical old memory is untouched: eviction is scoped to the caller.
            assert (await layer.call("get_memory", B, memory_id=other))[0]["content"] == "old-low"
            assert (await layer.call("evict_memories", A))[0]["evicted"] == 0

    run(go())


def test_confidence_decay_rules(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            stale = (await store(layer, A, "stale"))["memory_id"]
            floor = (await store(layer, A, "at floor"))["memory_id"]
            fresh = (await store(layer, A, "fresh"))["memory_id"]
            touched = (await store(layer, A, "touched recently"))["memory_id"]
            old = dt.datetime.now(dt.UTC) - dt.timedelta(days=10)
            await sql(
                layer,
                "UPDATE hatidata_internal.agent_memory SET created_at = ? WHERE content <> 'fresh'",
                [old],
            )
            await sql(
                layer,
                "UPDATE hatidata_internal.agent_memory SET confidence = 0.1"
                " WHERE content = 'at floor'",
            )
            await layer.call("get_memory", A, memory_id=touched)  # an access (unflushed)
            out = (await layer.call("decay_memories", A, rate=0.5))[0]
            assert out == {"decayed": 1, "rate": 0.5, "dry_run": False}

            async def conf(mid: str) -> float:  # read without counting an access
                rows = await sql(
                    layer,
                    "SELECT confidence FROM hatidata_internal.agent_memory WHERE memory_id = ?",
                    [mid],
                )
                return rows[0][0]

            assert await conf(stale) == pytest.approx(0.5)
            assert await conf(floor) == pytest.approx(0.1)
            assert await conf(fresh) == 1.0 and await conf(touched) == 1.0
            for _ in range(5):
                await layer.call("decay_memories", A, rate=0.5)
            assert await conf(stale) == pytest.approx(0.1)  # never below the floor
            await layer.call("get_memory", A, memory_id=floor)
            await sql(
                layer,
                "UPDATE hatidata_internal.agent_memory SET confidence = 0.8 WHERE content = 'stale'",
            )
            await layer.call("get_memory", A, memory_id=stale)  # accessed now: no more decay
            assert (await layer.call("decay_memories", A, rate=0.5))[0]["decayed"] == 0

    run(go())


def test_reembed_and_trigger_notification(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            seen: list[tuple[str, str, str, int]] = []

            def notify(who_: Any, source: str, source_id: str, text: str, vector: Any) -> None:
                seen.append((who_.agent_id, source, source_id, len(vector)))

            layer.triggers.notify = notify  # type: ignore[attr-defined]
            mid = (await store(layer, A, "notify me", wait=True))["memory_id"]
            assert seen == [("agent-a", "memory", mid, 384)]
            out = await layer.call("reembed_memory", A, memory_id=mid)
            assert out == [{"memory_id": mid, "status": "queued"}]
            await until(lambda: _status_is(layer, mid, "embedded"))
            assert await count_rows(layer, "agent_memory_vectors") == 1
            bulk = await layer.call(
                "reembed_memory",
                A,
                memory_ids=[mid, "00000000-0000-4000-8000-000000000000"],
                wait=True,
            )
            assert [b["status"] for b in bulk] == ["embedded", "skipped"]

    run(go())
