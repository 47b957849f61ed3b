"""Memories without a vector yet (embedding pending or failed) are found by keyword. The
index keeps their rows as committed, so that keyword scan reads no table (it used to scan
every memory of the agent for `NOT has_embedding` on each search); the copies must follow
every write, and past the index's bound (or with a metadata filter) search reads the
table as before."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_support import open_layer, run
from memory_support import A, pending_rows_match_table, sql, store

from proxy.agent.layer import AgentLayer
from proxy.agent.memory import pending as memory_pending
from proxy.agent.memory.schema import T_MEM


class Recording:
    """A cursor that notes every statement run on it."""

    def __init__(self, cur: Any, seen: list[str]) -> None:
        self._cur, self._seen = cur, seen

    def execute(self, text: str, *args: Any) -> Any:
        self._seen.append(text)
        return self._cur.execute(text, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


async def searched(layer: AgentLayer, query: str, **kw: Any) -> tuple[list[dict], list[str]]:
    """search_memory's results, and the statements it ran on the agent database."""
    seen: list[str] = []
    db = layer.db

    def recording(real: Callable[..., Any]) -> Callable[..., Any]:
        async def call(fn: Callable[[Any], Any]) -> Any:
            return await real(lambda cur: fn(Recording(cur, seen)))

        return call

    db.run, db.read = recording(db.run), recording(db.read)  # type: ignore[method-assign]
    try:
        hits = await layer.call("search_memory", A, [query], top_k=10, **kw)
    finally:
        del db.run, db.read  # the class's methods again
    return hits, seen


def block_background_embedding(layer: AgentLayer) -> None:
    """Memories stored from now on (without wait) stay pending."""
    layer.memory.stop_timeout = 0.2

    async def never(texts: list[str], mode: str = "passage", **kw: Any) -> Any:
        await asyncio.Event().wait()

    layer.semantic.worker.submit = never


def scans_memories(statements: list[str]) -> list[str]:
    return [s for s in statements if T_MEM in s and "contains(" in s]


@pytest.mark.parametrize("journal", [False, True], ids=["transaction", "journal"])
def test_pending_memory_found_by_keyword_without_a_table_scan(
    tmp_path: Path, journal: bool
) -> None:
    database = str(tmp_path / "users.duckdb") if journal else ":memory:"

    async def go() -> None:
        async with open_layer(tmp_path, database=database) as layer:
            assert (layer.journal.path is not None) is journal  # store_memory's fast path
            for i in range(30):
                await store(layer, A, f"quasar invoice number {i} was paid", wait=True)
            block_background_embedding(layer)
            late = await store(layer, A, "the QUASAR refund is still open", importance=0.9)
            other = await store(layer, A, "nothing about that here")
            assert late["embedding_status"] == other["embedding_status"] == "pending"

            hits, statements = await searched(layer, "quasar refund")
            kinds = {h["memory_id"]: h["score_kind"] for h in hits}
            assert kinds[late["memory_id"]] == "keyword"
            assert other["memory_id"] not in kinds
            assert "hybrid" in kinds.values()  # the embedded ones, by their vectors
            assert scans_memories(statements) == []  # no scan of the memory table
            assert await pending_rows_match_table(layer) == 2

            # A metadata filter needs the table: the same memory, found by SQL.
            await store(layer, A, "quasar refund, tagged", metadata={"tag": "x"})
            hits, statements = await searched(layer, "quasar refund", metadata={"tag": "x"})
            assert [h["score_kind"] for h in hits] == ["keyword"]
            assert len(scans_memories(statements)) == 1

    run(go())


def test_pending_rows_follow_every_write(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path, database=str(tmp_path / "users.duckdb")) as layer:
            await store(layer, A, "an embedded memory about billing", wait=True)
            block_background_embedding(layer)
            ids = [
                (await store(layer, A, f"billing dispute note {i}", importance=0.2 + i / 10))[
                    "memory_id"
                ]
                for i in range(6)
            ]
            assert await pending_rows_match_table(layer) == 6
            # Superseded (the transaction path): the old row retired, the new one pending.
            fix = await store(layer, A, "billing dispute note 0, corrected", supersedes=ids[0])
            assert await pending_rows_match_table(layer) == 7
            hits, _ = await searched(layer, "billing dispute")
            assert ids[0] not in {h["memory_id"] for h in hits}
            assert fix["memory_id"] in {h["memory_id"] for h in hits}
            hits, _ = await searched(layer, "billing dispute", include_superseded=True)
            assert ids[0] in {h["memory_id"] for h in hits}
            # Access counts flushed, confidence decayed, deleted, expired.
            assert await layer.memory.access.flush() >= 6
            assert await pending_rows_match_table(layer) == 7
            await sql(
                layer,
                f"UPDATE {T_MEM} SET last_accessed = NULL, created_at = now() - INTERVAL 30 DAY",
            )
            assert (await layer.call("decay_memories", A, rate=0.5))[0]["decayed"] >= 7
            assert await pending_rows_match_table(layer) == 7  # (created_at: raw SQL above)
            await layer.call("delete_memory", A, memory_id=ids[1])
            assert await pending_rows_match_table(layer) == 6
            hits, statements = await searched(layer, "billing dispute")
            assert ids[1] not in {h["memory_id"] for h in hits}
            assert scans_memories(statements) == []

    run(go())


def test_past_its_bound_search_reads_the_pending_rows_from_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_pending, "PENDING_ROWS_IN_RAM", 2)

    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await store(layer, A, "an embedded memory", wait=True)
            block_background_embedding(layer)
            ids = [(await store(layer, A, f"nebula fact {i}"))["memory_id"] for i in range(3)]
            assert await pending_rows_match_table(layer) == 2
            hits, statements = await searched(layer, "nebula")
            kinds = {h["memory_id"]: h["score_kind"] for h in hits}
            assert [kinds.get(i) for i in ids] == ["keyword"] * 3
            assert len(scans_memories(statements)) == 1

    run(go())
