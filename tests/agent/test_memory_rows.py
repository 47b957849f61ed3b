"""Search returns the vector index's copies of memory rows instead of reading the table,
so every write path must keep those copies equal to the table: checked after each kind
of write (store + embed, supersede, access flush, decay, re-embed, a failed re-embed,
delete of a superseding memory, expiry and eviction), and search results against
get_memory."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from agent_support import open_layer, run
from memory_support import A, B, index_rows_match_table, sql, store

from proxy.agent.memory.index_types import TEXT_IN_RAM
from proxy.agent.memory.rows import refresh_index
from proxy.agent.memory.schema import RETURNING_ROWS, T_MEM

SKIP = {"access_count", "last_accessed"}  # get_memory counts an access itself


def test_index_row_copies_follow_every_write(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            ids = []
            for i in range(12):
                kw: dict[str, Any] = {"importance": 0.1 + i / 20, "metadata": {"n": i}}
                if i % 3 == 0:
                    kw["session_id"] = "s1"
                if i == 4:
                    kw["ttl_seconds"] = 3600
                out = await store(layer, A, f"billing dispute note {i}", wait=True, **kw)
                ids.append(out["memory_id"])
            await store(layer, B, "billing dispute of another agent", wait=True)
            long = "billing " + "x" * TEXT_IN_RAM
            await store(layer, A, long, wait=True)  # too long to copy: read from the table
            assert await index_rows_match_table(layer) == 13

            fix = await store(
                layer, A, "billing dispute note 1, corrected", supersedes=ids[1], wait=True
            )
            await store(layer, A, "another correction", supersedes=ids[2], wait=True)
            assert await index_rows_match_table(layer) == 15

            await layer.call("search_memory", A, ["billing dispute"], top_k=5)
            await layer.call("get_memory", A, memory_id=ids[3])
            assert await layer.memory.access.flush() >= 5
            assert await index_rows_match_table(layer) == 15

            old = dt.datetime.now(dt.UTC) - dt.timedelta(days=30)
            changed = await sql(  # a writer that keeps the rule (tests only write raw SQL)
                layer,
                f"UPDATE {T_MEM} SET created_at = ?, last_accessed = NULL"
                f" WHERE memory_id IN (?, ?) {RETURNING_ROWS}",
                [old, ids[5], ids[6]],
            )
            refresh_index(layer.memory.index, changed)
            assert (await layer.call("decay_memories", A, rate=0.5))[0]["decayed"] == 2
            assert await index_rows_match_table(layer) == 15

            await layer.call("reembed_memory", A, memory_id=ids[7], wait=True)
            assert await index_rows_match_table(layer) == 15
            worker = layer.semantic.worker
            real = worker.embed_now

            async def broken(texts: list[str], mode: str = "query", **kw: Any) -> Any:
                if mode == "passage":
                    raise RuntimeError("model down")
                return await real(texts, mode, **kw)

            worker.embed_now = broken
            layer.memory.retry_delays = ()  # no retries: 'failed' at once
            await layer.call("reembed_memory", A, memory_id=ids[8], wait=True)
            worker.embed_now = real
            row = (await layer.call("get_memory", A, memory_id=ids[8]))[0]
            assert row["embedding_status"] == "failed" and row["embedding_error"]
            assert row["has_embedding"]  # its old vector still serves
            assert await index_rows_match_table(layer) == 15

            await layer.call("delete_memory", A, memory_id=fix["memory_id"])
            retired = (await layer.call("get_memory", A, memory_id=ids[1]))[0]
            assert retired["conflict_status"] == "superseded"
            assert retired["superseded_by_id"] is None
            assert await index_rows_match_table(layer) == 14

            await sql(layer, f"UPDATE {T_MEM} SET expires_at = now() WHERE memory_id = ?", [ids[4]])
            assert (await layer.call("expire_memories", A))[0]["expired"] == 1
            await layer.call("evict_memories", A, max_age_days=1000, max_per_agent=10)
            assert await index_rows_match_table(layer) == 10

            # What search returns is what get_memory reads from the table.
            hits = await layer.call(
                "search_memory", A, ["billing dispute"], top_k=20, include_superseded=True
            )
            assert len(hits) >= 8
            for h in hits:
                row = (await layer.call("get_memory", A, memory_id=h["memory_id"]))[0]
                assert {k: v for k, v in row.items() if k not in SKIP} == {
                    k: v for k, v in h.items() if k in row and k not in SKIP
                }

    run(go())
