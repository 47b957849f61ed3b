"""Agent memory: isolation between agents and orgs, search filters, score weights, keyword mode.

Hash embedder for behaviour; search quality with the real model is test_memory_quality.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_support import open_layer, run
from memory_support import OTHER_ORG, A, B, store, until

from proxy.agent.layer import AgentLayer
from proxy.core.errors import AgentError


def test_isolation_between_agents_and_orgs_and_grants(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            mine = await store(layer, A, "secret plan about acquisitions", wait=True)
            mid = mine["memory_id"]
            for other in (B, OTHER_ORG):
                for name in ("get_memory", "delete_memory", "reembed_memory"):
                    with pytest.raises(AgentError) as err:
                        await layer.call(name, other, memory_id=mid)
                    assert err.value.code == "not_found"
                assert await layer.call("search_memory", other, ["acquisitions"]) == []
                assert await layer.call("list_memories", other) == []
                stats = (await layer.call("memory_embedding_stats", other))[0]
                assert stats["total"] == 0
            # The main view shows each identity only its own rows.
            assert await _view_ids(layer, "local", "agent-a") == [mid]
            assert await _view_ids(layer, "local", "agent-b") == []
            assert await _view_ids(layer, "org-2", "agent-a") == []
            # A grant lets B read, not write; revoking ends it.
            await layer.call("grant_memory_access", A, grantee_agent="agent-b")
            assert (await layer.call("get_memory", B, memory_id=mid))[0]["agent_id"] == "agent-a"
            assert await layer.call("search_memory", B, ["acquisitions"]) == []
            shared = await layer.call("search_memory", B, ["acquisitions"], include_shared=True)
            assert [h["memory_id"] for h in shared] == [mid]
            assert await _view_ids(layer, "local", "agent-b") == [mid]
            with pytest.raises(AgentError):
                await layer.call("delete_memory", B, memory_id=mid)
            with pytest.raises(AgentError):
                await layer.call("get_memory", OTHER_ORG, memory_id=mid)
            out = await layer.call("revoke_memory_access", A, grantee_agent="agent-b")
            assert out[0]["revoked"] is True
            with pytest.raises(AgentError):
                await layer.call("get_memory", B, memory_id=mid)
            assert (await layer.call("delete_memory", A, memory_id=mid))[0] == {
                "deleted": True,
                "memory_id": mid,
            }

    run(go())


async def _view_ids(layer: AgentLayer, org: str, agent: str) -> list[str]:
    """What `SELECT ... FROM _hatidata_agent_memory` shows that identity (the SQL path)."""
    from proxy.core.identity import Identity
    from proxy.execution.executor import execute_sql

    _, rows = await execute_sql(
        layer,
        Identity(org, agent, agent),
        "SELECT memory_id::VARCHAR FROM main._hatidata_agent_memory",
    )
    return [r[0] for r in rows]


def test_search_filters_and_top_k_cap(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path, memory_max_results=3) as layer:
            await store(layer, A, "budget note one", memory_type="fact", importance=0.2)
            await store(
                layer, A, "budget note two", memory_type="episode", session_id="s1", importance=0.9
            )
            await store(
                layer,
                A,
                "budget note three",
                memory_type="fact",
                metadata={"team": "finance", "n": 3},
                importance=0.6,
            )
            await store(layer, A, "budget note four", metadata='{"team": "sales"}', wait=True)
            await until(lambda: _stats_pending_zero(layer))

            async def ids(**kw: Any) -> set[str]:
                hits = await layer.call("search_memory", A, ["budget note"], top_k=10, **kw)
                return {h["content"].split()[-1] for h in hits}

            assert len(await ids()) == 3  # capped by memory_max_results
            assert await ids(memory_type="episode") == {"two"}
            assert await ids(session_id="s1") == {"two"}
            assert await ids(min_importance=0.5) == {"two", "three", "four"}
            assert await ids(metadata={"team": "finance"}) == {"three"}
            assert await ids(metadata='{"team": "finance", "n": 3}') == {"three"}
            assert await ids(metadata={"team": "nobody"}) == set()
            hits = await layer.call("search_memory", A, ["budget"], top_k=3)
            assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
            listed = await layer.call("list_memories", A, memory_type="fact")
            assert {m["content"].split()[-1] for m in listed} == {"one", "three", "four"}
            listed = await layer.call("list_memories", A, embedding_status="embedded", limit=500)
            assert len(listed) == 4

    run(go())


async def _stats_pending_zero(layer: AgentLayer) -> bool:
    return (await layer.call("memory_embedding_stats", A))[0]["total_pending"] == 0


def test_score_weights_from_config(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path, memory_score_weights="1,0,0,0,0") as layer:
            await store(layer, A, "alpha", wait=True)
            await store(layer, A, "beta gamma", wait=True)
            hits = await layer.call("search_memory", A, ["alpha"])
            for h in hits:  # the weighted score is the cosine alone
                assert h["weighted_score"] == pytest.approx(max(h["similarity_score"], 0.0))
            # First on both sides (weighted and BM25): 1; second on the weighted side only.
            assert [h["content"] for h in hits] == ["alpha", "beta gamma"]
            assert [h["score"] for h in hits] == [1.0, 0.25]

    run(go())


def test_keyword_mode_without_a_model(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            semantic = layer.semantic
            saved = semantic.embedder, semantic.worker
            semantic.embedder, semantic.worker = None, None
            try:
                r = await store(layer, A, "Shipping delays in the Rotterdam port", wait=True)
                await store(layer, A, "Completely unrelated memory")
                assert r["embedding_status"] == "pending" and r["has_embedding"] is False
                hits = await layer.call("search_memory", A, ["rotterdam shipping"])
                assert [h["memory_id"] for h in hits] == [r["memory_id"]]
                assert hits[0]["score_kind"] == "keyword"
                assert hits[0]["similarity_score"] == 1.0
                with pytest.raises(AgentError) as err:
                    await layer.call("reembed_memory", A, memory_id=r["memory_id"])
                assert err.value.code == "unavailable"
            finally:
                semantic.embedder, semantic.worker = saved

    run(go())
