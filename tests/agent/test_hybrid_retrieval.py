"""Hybrid retrieval (proxy/agent/retrieval, memory and session search): a hit on the
query's rare words is found even when its vector is far outside the cosine pool, and
scoping still holds. Hash embedder: its cosine ranks are arbitrary, which is the point
(the keyword pool must find the rare-word hits whatever the vectors say)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from agent_support import open_layer, run, who
from memory_support import OTHER_ORG, A, B, sql, store

RARE = [f"zq{i}vex" for i in range(12)]


def test_memory_rare_words_found_outside_the_cosine_pool(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            for i in range(240):
                await store(layer, A, f"routine note {i} about the weekly planning meeting")
            ids = {}
            for w in RARE:
                ids[w] = (await store(layer, A, f"the parcel {w} was left at the gate"))[
                    "memory_id"
                ]
            await store(layer, B, f"the parcel {RARE[0]} belongs to agent b", wait=True)
            await store(layer, OTHER_ORG, f"the parcel {RARE[0]} of another org", wait=True)
            await store(layer, A, "last one", wait=True)
            await _all_embedded(layer)  # stores without wait are embedded in the background
            agent = layer.memory.index.agent(A.org_id, A.agent_id)
            outside = 0
            for w in RARE:
                query = f"where is {w}"
                q = np.asarray((await layer.semantic.worker.embed_now([query], "query"))[0])
                _, _, pool = agent.nearest(q / np.linalg.norm(q), 50)
                outside += ids[w] not in set(pool.tolist())
                hits = await layer.call("search_memory", A, [query], top_k=5)
                assert hits[0]["memory_id"] == ids[w], (w, hits[:2])
                assert all(h["agent_id"] == "agent-a" for h in hits)
            # The old search (cosine pool only) would have missed these.
            assert outside >= 3, outside
            for other in (B, OTHER_ORG):
                hits = await layer.call("search_memory", other, [RARE[5]])
                assert hits == [] or all(RARE[5] not in h["content"] for h in hits)

    run(go())


async def _all_embedded(layer: object, timeout: float = 60) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        pending = await sql(
            layer,  # type: ignore[arg-type]
            "SELECT count(*) FROM hatidata_internal.agent_memory"
            " WHERE embedding_status = 'pending'",
        )
        if pending[0][0] == 0:
            return
        assert asyncio.get_running_loop().time() < deadline, f"{pending[0][0]} still pending"
        await asyncio.sleep(0.05)


def test_event_rare_words_found_and_scoped_and_rebuild_same(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            me, other_agent = who("agent-a"), who("agent-b")
            for user in ("u1", "u2"):
                await layer.call("create_session", me, app_name="app", user_id=user,
                                 session_id=f"s-{user}")  # fmt: skip
            await layer.call("create_session", me, app_name="app2", user_id="u1", session_id="x")
            await layer.call("create_session", other_agent, app_name="app", user_id="u1",
                             session_id="s-u1")  # fmt: skip

            async def say(w: object, sid: str, text: str) -> int:
                msg = {"role": "user", "parts": [{"type": "text", "text": text}]}
                rows = await layer.call("append_event", w, session_id=sid, author="user",
                                        message=msg)  # fmt: skip
                return rows[0]["seq"]

            for i in range(150):
                await say(me, "s-u1", f"small talk {i} about the planning meeting")
            where = {w: await say(me, "s-u1", f"parcel {w} left at the gate") for w in RARE}
            await say(me, "s-u2", f"parcel {RARE[0]} of user two")
            await say(me, "x", f"parcel {RARE[0]} of app two")
            await say(other_agent, "s-u1", f"parcel {RARE[0]} of agent b")
            while await layer.sessions.index.embed_pending(256):
                pass

            async def top(w: object, query: str, mode: str = "hybrid", **kw: str) -> list:
                rows = await layer.call("search_sessions", w, query=query, top_k=10, mode=mode,
                                        **kw)  # fmt: skip
                return [(r["session_id"], r["seq"]) for r in rows]

            before = {}
            for w in RARE:
                got = await top(me, f"{w} planning meeting", app_name="app", user_id="u1")
                assert ("s-u1", where[w]) in got, (w, got)
                assert all(s == "s-u1" for s, _ in got)
                before[w] = got
            # Scoping: other user, app and agent hold RARE[0] too; never mixed in.
            assert await top(me, RARE[0], "keyword", app_name="app", user_id="u2") == [("s-u2", 1)]
            assert await top(other_agent, RARE[0], "keyword") == [("s-u1", 1)]
            assert ("x", 1) not in await top(me, RARE[0], "keyword", app_name="app")
            await layer.call("rebuild_session_index", me, app_name="app")
            for w in RARE:
                got = await top(me, f"{w} planning meeting", app_name="app", user_id="u1")
                assert got == before[w], w
            # Deleting a session wipes its events from the RAM mirror at once (no text
            # left), and a compaction of the dead slots keeps every other answer.
            mirror = await layer.sessions.index._agent(me)
            await layer.call("delete_session", me, session_id="s-u2")
            assert not any(m and m[0] == "s-u2" for m in mirror.meta)
            assert await top(me, RARE[0], "keyword", app_name="app", user_id="u2") == []
            slots = mirror.n
            await layer.call("delete_session", me, session_id="s-u1")
            assert mirror.n < slots and all(m[0] == "x" for m in mirror.meta), mirror.n
            for mode in ("keyword", "vector", "hybrid"):
                assert await top(me, f"parcel {RARE[0]}", mode) == [("x", 1)], mode

    run(go())


def test_bm25_matches_the_formula_after_adds_removes_and_renumbering() -> None:
    import math
    import random

    from proxy.agent.retrieval.bm25 import K1, B, Bm25, terms

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(30)]
    docs = {i: " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12))) for i in range(80)}
    index = Bm25()
    for d, text in docs.items():
        index.add(d, text)
    for d in range(0, 80, 7):  # removed, and one re-added with new words
        index.remove(d)
        del docs[d]
    index.add(3, "w1 w1 w2 fresh")
    docs[3] = "w1 w1 w2 fresh"
    new_of = {d: i for i, d in enumerate(sorted(docs))}
    index.remap(new_of)
    docs = {new_of[d]: t for d, t in docs.items()}

    def reference(query: list[str]) -> dict[int, float]:
        n = len(docs)
        lens = {d: len(terms(t)) for d, t in docs.items()}
        avg = sum(lens.values()) / n
        out: dict[int, float] = {}
        for q in dict.fromkeys(query):
            df = sum(q in terms(t) for t in docs.values())
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for d, t in docs.items():
                tf = terms(t).count(q)
                if tf:
                    norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * lens[d] / avg))
                    out[d] = out.get(d, 0.0) + idf * norm
        return out

    for query in (["w1"], ["w1", "w2", "fresh"], ["w5", "w9", "nothing"]):
        want = reference(query)
        got_docs, got = index.scores(query)
        assert dict(zip(got_docs.tolist(), got.tolist(), strict=True)) == pytest.approx(want)
        top_docs, _ = index.top(query, 5)
        best = sorted(want, key=lambda d: (-want[d], d))[:5]
        # The best five by score (equal scores may come in either order: float sums).
        assert [want[d] for d in top_docs.tolist()] == pytest.approx([want[d] for d in best])
