"""search_memory reads from the table only the rows that can make its top k, and ranks
exactly as scoring every candidate would (bounds from the index's copies of the scoring
columns: created_at, importance, confidence, content when short), then interleaves that
weighted ranking with the BM25 ranking (retrieval.fuse)."""

from __future__ import annotations

import datetime as dt
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
from agent_support import open_layer, run
from memory_support import A, sql, store

from proxy.agent.layer import AgentLayer
from proxy.agent.memory import search as ms
from proxy.agent.memory.index_types import TEXT_IN_RAM, RowFilter
from proxy.agent.memory.schema import SELECT_COLUMNS, T_MEM, T_VEC
from proxy.agent.retrieval.fuse import interleave

WORDS = [
    "invoice",
    "refund",
    "billing",
    "dispute",
    "churn",
    "renewal",
    "outage",
    "latency",
    "pricing",
    "contract",
]
QUERIES = [
    "billing dispute",
    "refund for the invoice",
    "renewal pricing contract",
    "outage latency",
    "churn",
    "contract dispute refund",
]


async def _reference(layer: AgentLayer, query: str, top_k: int) -> list[tuple[str, float, float]]:
    """(memory id, score, weighted score) of search's results, the slow way: the 50
    nearest memories and the BM25 top_k (the keyword side), every one read and scored by
    the weighted score (what search did before it bounded scores; the index is exact
    below 20k rows), the weighted top_k interleaved with the keyword side."""
    qvec = layer.semantic.embedder.embed_batch([query], mode="query")[0]
    qvec = qvec / np.linalg.norm(qvec)
    vecs = await sql(layer, f"SELECT memory_id::VARCHAR, embedding FROM {T_VEC}")
    sims = {mid: float(np.dot(qvec, np.asarray(v) / np.linalg.norm(v))) for mid, v in vecs}
    nearest = sorted(sims, key=lambda m: -sims[m])[:50]
    agent = layer.memory.index.agent(A.org_id, A.agent_id)
    assert agent is not None
    tokens = ms.keywords(query)
    pool = agent.keyword_hits(tokens, 50, qvec, None, RowFilter(now=time.time()), rare_only=False)
    keyword_side = pool.ids.tolist()[:top_k]
    candidates = list({*nearest, *keyword_side})
    rows = await sql(
        layer,
        f"SELECT {SELECT_COLUMNS} FROM {T_MEM} WHERE memory_id::VARCHAR IN "
        f"({', '.join('?' * len(candidates))})",
        candidates,
    )
    at = dt.datetime.now(dt.UTC)
    weighted = {
        str(r[0]): (ms.row_score(layer.memory.weights, tokens, r, sims[str(r[0])], at)[0], r)
        for r in rows
    }

    def key(m: str) -> tuple:
        return (-weighted[m][0], -weighted[m][1][ms._CREATED].timestamp(), m)

    weighted_side = sorted(weighted, key=key)[:top_k]
    placed = interleave(weighted_side, keyword_side, key)[:top_k]
    return [(p.key, p.score, weighted[p.key][0]) for p in placed]


async def _fill(layer: AgentLayer, rng: random.Random) -> None:
    for i in range(150):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
        content = f"memory {i}: {words}"
        if i % 15 == 0:  # longer than the index keeps: its keyword score is only bounded
            content += " " + " ".join(rng.choice(WORDS) for _ in range(TEXT_IN_RAM // 5))
            assert len(content) > TEXT_IN_RAM
        await store(layer, A, content, importance=round(rng.random(), 3), wait=True)
    # Ages from a few minutes to months, so recency and decay both matter.
    await sql(
        layer,
        f"UPDATE {T_MEM} SET created_at = now() - to_minutes((hash(memory_id) % 200000)::BIGINT),"
        " last_accessed = NULL",
    )


def test_bounded_reads_rank_exactly_like_scoring_every_candidate(tmp_path: Path) -> None:
    db = str(tmp_path / "m.duckdb")

    async def fill() -> None:
        async with open_layer(tmp_path, database=db) as layer:
            await _fill(layer, random.Random(5))

    async def check() -> None:
        # A restart loads the index (and its scoring columns) from the table.
        async with open_layer(tmp_path, database=db) as layer:
            decayed = (await layer.call("decay_memories", A, rate=0.5))[0]["decayed"]
            assert decayed > 10
            await _index_confidence_matches_table(layer)
            for query in QUERIES:
                for top_k in (3, 10):
                    got = await layer.call("search_memory", A, [query], top_k=top_k)
                    want = await _reference(layer, query, top_k)
                    assert [g["memory_id"] for g in got] == [w[0] for w in want], query
                    for g, (_, score, weighted) in zip(got, want, strict=True):
                        assert g["score"] == score
                        assert abs(g["weighted_score"] - weighted) < 1e-6
            await _reads_fewer_rows_than_it_ranks(layer)

    run(fill())
    run(check())


async def _index_confidence_matches_table(layer: AgentLayer) -> None:
    table = dict(await sql(layer, f"SELECT memory_id::VARCHAR, confidence FROM {T_MEM}"))
    assert min(table.values()) < 1.0
    agent = layer.memory.index.agent(A.org_id, A.agent_id)
    assert agent is not None
    q = np.ones(agent.dims, dtype=np.float32) / np.sqrt(agent.dims)
    hits = agent.hits(q, 1000, None, RowFilter(now=0.0, include_superseded=True))
    assert len(hits.ids) == len(table)
    for mid, conf in zip(hits.ids.tolist(), hits.confidence.tolist(), strict=True):
        assert abs(table[mid] - conf) < 1e-9, mid


async def _reads_fewer_rows_than_it_ranks(layer: AgentLayer) -> None:
    agent = layer.memory.index.agent(A.org_id, A.agent_id)
    qvec = layer.semantic.embedder.embed_batch(["billing dispute"], mode="query")[0]
    hits = ms.nearest([agent], qvec / np.linalg.norm(qvec), 50, None, None)
    filters = ms.Filters(A.org_id, [A.agent_id])

    def read(cur: Any) -> dict[str, Any]:
        at = dt.datetime.now(dt.UTC)
        return ms.read_best(cur, hits, ["billing", "dispute"], layer.memory.weights, at, 3, filters)

    rows = await layer.db.run(read)
    assert 3 <= len(rows) < len(hits.seqs) // 2
