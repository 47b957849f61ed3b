"""Search filters outside SQL give what the SQL filters give: the in-RAM index's filter
columns (applied before the neighbour search) and the re-check of the rows search reads
(`Filters.accepts`), both compared with `Filters.sql` over the same table."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from pathlib import Path
from typing import Any

import numpy as np
from agent_support import open_layer, run
from memory_support import OTHER_ORG, A, B, sql, store

from proxy.agent.layer import AgentLayer
from proxy.agent.memory.args import now
from proxy.agent.memory.index_types import RowFilter
from proxy.agent.memory.rows import index_attrs
from proxy.agent.memory.schema import RETURNING_ROWS, SELECT_COLUMNS, T_MEM
from proxy.agent.memory.search import Filters

KINDS = (None, "fact", "episode", "nope")
SESSIONS = (None, "s1", "nope")
IMPORTANCE = (None, 0.0, 0.5, 0.7, 1.0)


async def _memories(layer: AgentLayer) -> dict[str, str]:
    """Memories of A covering every filter value (some expired, some superseded), plus
    look-alikes of B and of another org; returns content -> memory_id of A's."""
    ids: dict[str, str] = {}
    for i in range(24):
        kind = ("fact", "episode", "preference")[i % 3]
        kw: dict[str, Any] = {"memory_type": kind, "importance": (0.2, 0.5, 0.7, 0.9)[i % 4]}
        if i % 2:
            kw["session_id"] = "s1"
        if i % 5 == 0:
            kw["ttl_seconds"] = 1
        ids[f"note {i}"] = (await store(layer, A, f"note {i}", wait=True, **kw))["memory_id"]
        for other in (B, OTHER_ORG):
            await store(layer, other, f"note {i}", wait=True, **kw)
    for i in (3, 8, 13):  # retired by a correction
        fix = await store(layer, A, f"note {i} fixed", supersedes=ids[f"note {i}"], wait=True)
        ids[f"note {i} fixed"] = fix["memory_id"]
    await asyncio.sleep(1.2)  # the ttl_seconds=1 memories expire
    return ids


def _filter_sets() -> list[dict[str, Any]]:
    out = []
    for kind, session, imp, old in itertools.product(KINDS, SESSIONS, IMPORTANCE, (False, True)):
        out.append(
            {
                "memory_type": kind,
                "session_id": session,
                "min_importance": imp,
                "include_superseded": old,
            }
        )
    return out


def test_index_row_recheck_and_search_filters_match_the_sql_filters(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            ids = await _memories(layer)
            rows = await sql(layer, f"SELECT {SELECT_COLUMNS} FROM {T_MEM}")
            agent = layer.memory.index.agent(A.org_id, A.agent_id)
            assert agent is not None
            q = np.eye(layer.memory.index.dims, dtype=np.float32)[0]
            sizes = set()
            for kw in _filter_sets():
                f = Filters(A.org_id, [A.agent_id], **kw)
                want = await _sql_ids(layer, f)
                sizes.add(len(want))
                at = now()
                # The re-check of rows read by primary key.
                assert {r[0] for r in rows if f.accepts(r, at)} == want, kw
                # The index's filter columns (every memory of A has a vector).
                where = RowFilter(at.timestamp(), **kw)
                for exact in (False, True):
                    assert set(agent.nearest(q, 1000, None, where, exact)[2].tolist()) == want, kw
            assert 0 in sizes and max(sizes) == len(ids) - 5  # nothing .. all but expired
            live = await _sql_ids(layer, Filters(A.org_id, [A.agent_id]))
            assert len(live) == len(ids) - 5 - 3  # 5 expired, 3 superseded
            # Scope: both agents when B shares with A.
            both = Filters(A.org_id, [A.agent_id, B.agent_id], memory_type="fact")
            want = await _sql_ids(layer, both)
            assert {r[0] for r in rows if both.accepts(r, now())} == want
            assert len(want) > len(
                await _sql_ids(layer, Filters(A.org_id, [A.agent_id], memory_type="fact"))
            )
            # And search itself, through the row re-check.
            for kw in _filter_sets()[::7]:
                args = {k: v for k, v in kw.items() if v is not None}
                want = await _sql_ids(layer, Filters(A.org_id, [A.agent_id], **kw))
                hits = await layer.call("search_memory", A, ["note"], top_k=100, **args)
                assert {h["memory_id"] for h in hits} == want, kw
            # A write refreshes the index's row copy, and the re-check of that row hides
            # it even where the filter columns still say live (a refresh half way).
            mid = sorted(live)[0]
            changed = await sql(
                layer,
                f"UPDATE {T_MEM} SET conflict_status = 'superseded' WHERE memory_id = ?"
                f" {RETURNING_ROWS}",
                [mid],
            )
            half = dataclasses.replace(index_attrs(changed[0][1:]), live=True)
            agent.refresh(changed[0][0], half)
            hits = await layer.call("search_memory", A, ["note"], top_k=100)
            assert {h["memory_id"] for h in hits} == live - {mid}

    run(go())


async def _sql_ids(layer: AgentLayer, f: Filters) -> set[str]:
    rows = await sql(layer, f"SELECT memory_id::VARCHAR FROM {T_MEM} WHERE {f.sql}", f.params)
    return {r[0] for r in rows}
