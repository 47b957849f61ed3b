"""Shared helpers for the memory tests: store, status polling, raw SQL on the layer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from agent_support import who

from proxy.agent.layer import AgentLayer

A = who("agent-a")
B = who("agent-b")
OTHER_ORG = who("agent-a", org_id="org-2")


async def until(cond: Callable[[], Any], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def store(layer: AgentLayer, who_: Any, content: str, **kw: Any) -> dict[str, Any]:
    return (await layer.call("store_memory", who_, [content], **kw))[0]


async def status_of(layer: AgentLayer, who_: Any, mid: str) -> str:
    return (await layer.call("get_memory", who_, memory_id=mid))[0]["embedding_status"]


async def count_rows(layer: AgentLayer, table: str = "agent_memory") -> int:
    return await layer.db.run(
        lambda cur: cur.execute(f"SELECT count(*) FROM hatidata_internal.{table}").fetchone()[0]
    )


async def sql(layer: AgentLayer, text: str, params: list[Any] | None = None) -> list[tuple]:
    return await layer.db.run(lambda cur: cur.execute(text, params or []).fetchall())


async def index_rows_match_table(layer: AgentLayer) -> int:
    """Every row copy the vector index holds equals the table's row (search returns the
    copies instead of reading the table); returns how many copies were compared."""
    import numpy as np

    from proxy.agent.memory.index_types import RowFilter
    from proxy.agent.memory.schema import COL, SELECT_COLUMNS, T_MEM

    table = {r[0]: r for r in await sql(layer, f"SELECT {SELECT_COLUMNS} FROM {T_MEM}")}
    compared = 0
    for agent in layer.memory.index._agents.values():
        q = np.ones(agent.dims, dtype=np.float32) / np.sqrt(agent.dims)
        every = RowFilter(now=0.0, include_superseded=True)
        hits = agent.hits(q, len(agent), None, every, exact=True)
        assert len(hits.ids) == len(agent)
        for mid, row, conf in zip(hits.ids, hits.rows, hits.confidence, strict=True):
            assert mid in table, f"the index holds deleted memory {mid}"
            assert conf == table[mid][COL["confidence"]], mid  # search ranks by it
            if row is not None:
                assert row == table[mid], (mid, row, table[mid])
                compared += 1
    return compared


async def pending_rows_match_table(layer: AgentLayer) -> int:
    """Every row the index keeps of a memory without a vector (search's keyword scan of
    them reads these instead of the table) equals the table's row, and belongs to a memory
    without a vector; returns how many were compared."""
    from proxy.agent.memory.schema import COL, SELECT_COLUMNS, T_MEM

    await layer.journal.settled_all()  # stores acknowledged through the journal applied
    table = {r[0]: r for r in await sql(layer, f"SELECT {SELECT_COLUMNS} FROM {T_MEM}")}
    compared = 0
    for row in layer.memory.index.unembedded.kept_rows():
        mid = row[COL["memory_id"]]
        assert mid in table, f"the index keeps a row of deleted memory {mid}"
        assert not table[mid][COL["has_embedding"]], mid
        assert row == table[mid], (mid, row, table[mid])
        compared += 1
    return compared
