"""The in-RAM vector index: filters before the neighbour search, retire, tracking, the
sign-code stage, and searches running while the index changes."""

from __future__ import annotations

import datetime as dt
import threading
import time

import numpy as np
import pytest

from proxy.agent.memory import index as memory_index
from proxy.agent.memory import pending as memory_pending
from proxy.agent.memory.index import VectorIndex
from proxy.agent.memory.index_types import Attrs, RowFilter


def _index() -> tuple[VectorIndex, np.ndarray]:
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((40, 8)).astype(np.float32)
    idx = VectorIndex(8)
    past = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    for i, v in enumerate(vecs):
        idx.add(
            "org",
            "a",
            i,
            v,
            Attrs(
                memory_id=f"id-{i}",
                importance=i / 40,
                expires_at=past if i % 10 == 9 else None,
                memory_type="fact" if i % 2 else "episode",
                session_id="s1" if i < 20 else None,
            ),
        )
    return idx, vecs


def _exact(vecs: np.ndarray, q: np.ndarray, keep: list[int], k: int) -> list[int]:
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    sims = unit @ q
    return sorted(keep, key=lambda i: -sims[i])[:k]


def test_filters_narrow_the_search_exactly() -> None:
    idx, vecs = _index()
    q = vecs[3] / np.linalg.norm(vecs[3])
    agent = idx.agent("org", "a")
    assert agent is not None
    now = dt.datetime.now(dt.UTC).timestamp()
    cases = [
        (RowFilter(now), lambda i: i % 10 != 9),
        (RowFilter(now, memory_type="fact"), lambda i: i % 10 != 9 and i % 2 == 1),
        (RowFilter(now, session_id="s1", min_importance=0.25), lambda i: 10 <= i < 19),
        (RowFilter(now, memory_type="nope"), lambda i: False),
    ]
    for where, keep in cases:
        seqs, sims, ids = agent.nearest(q, 5, None, where)
        want = _exact(vecs, q, [i for i in range(40) if keep(i)], 5)
        assert seqs.tolist() == want
        assert ids.tolist() == [f"id-{i}" for i in want]
        assert list(sims) == sorted(sims, reverse=True)
    allowed = np.array([1, 2, 3])
    assert set(agent.nearest(q, 10, allowed, RowFilter(now))[0].tolist()) == {1, 2, 3}


def test_refresh_remove_and_unembedded_tracking() -> None:
    idx, vecs = _index()
    agent = idx.agent("org", "a")
    assert agent is not None
    q = vecs[3] / np.linalg.norm(vecs[3])
    now = dt.datetime.now(dt.UTC).timestamp()
    assert agent.nearest(q, 1, None, RowFilter(now))[0].tolist() == [3]
    idx.refresh(3, Attrs(memory_id="id-3", live=False, confidence=0.4, row=("id-3", "new")))
    hits = agent.hits(q, 1, None, RowFilter(now, include_superseded=True))
    assert hits.rows.tolist() == [("id-3", "new")] and hits.confidence.tolist() == [0.4]
    assert 3 not in agent.nearest(q, 40, None, RowFilter(now))[0].tolist()
    assert agent.nearest(q, 1, None, RowFilter(now, include_superseded=True))[0].tolist() == [3]
    for s in range(12):  # enough tombstones to compact on the next growth
        idx.remove(s)
    for s in range(100, 130):
        idx.add("org", "a", s, vecs[s % 40], Attrs(memory_id=f"id-{s}", memory_type="fact"))
    seqs, _, ids = agent.nearest(q, 100, None, RowFilter(now, memory_type="fact"))
    assert all(s >= 12 for s in seqs.tolist())
    assert ids.tolist() == [f"id-{s}" for s in seqs.tolist()]
    assert not idx.unembedded.has("org", "a")
    idx.unembedded.note("org", "a", 500, None)
    idx.unembedded.note("org", "a", 501, None)
    assert idx.unembedded.has("org", "a") and not idx.unembedded.has("org", "b")
    idx.add("org", "a", 500, vecs[0], Attrs(memory_id="id-500"))
    idx.remove(501)
    assert not idx.unembedded.has("org", "a")


def test_rows_of_unembedded_memories_are_all_or_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """`unembedded_rows` gives the agent's rows without a vector only while it holds every
    one (else None: search reads the table); a refresh replaces a copy, a row too long to
    keep drops it, and the copies stay within PENDING_ROWS_IN_RAM."""
    monkeypatch.setattr(memory_pending, "PENDING_ROWS_IN_RAM", 3)
    idx = VectorIndex(8)
    assert idx.unembedded.rows("org", "a") == ()
    for s in (1, 2, 3):
        idx.unembedded.note("org", "a", s, (f"id-{s}", "v1"))
    assert sorted(idx.unembedded.rows("org", "a") or ()) == [(f"id-{s}", "v1") for s in (1, 2, 3)]
    idx.unembedded.note("org", "a", 4, ("id-4", "v1"))  # over the bound: not kept
    assert idx.unembedded.rows("org", "a") is None
    idx.unembedded.note("org", "b", 9, ("id-9", "v1"))  # nor for another agent
    assert idx.unembedded.rows("org", "b") is None
    idx.remove(4)
    idx.remove(9)
    idx.refresh(2, Attrs(memory_id="id-2", row=("id-2", "v2")))
    assert sorted(idx.unembedded.rows("org", "a") or ()) == [
        ("id-1", "v1"),
        ("id-2", "v2"),
        ("id-3", "v1"),
    ]
    idx.add("org", "a", 1, np.ones(8, np.float32), Attrs(memory_id="id-1"))  # embedded
    idx.refresh(3, Attrs(memory_id="id-3", row=None))  # its content too long to keep now
    assert idx.unembedded.rows("org", "a") is None
    idx.remove(3)
    assert idx.unembedded.rows("org", "a") == (("id-2", "v2"),)
    idx.unembedded.note("org", "b", 10, ("id-10", "v1"))  # room again
    assert idx.unembedded.rows("org", "b") == (("id-10", "v1"),)
    idx.clear()
    assert idx.unembedded.rows("org", "a") == () and idx.unembedded.kept == 0


def _clustered(n: int, dims: int, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((max(n // 50, 4), dims))
    vecs = centers[rng.integers(0, len(centers), n)] + 0.7 * rng.standard_normal((n, dims))
    return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def test_sign_codes_and_hamming_distance() -> None:
    rng = np.random.default_rng(3)
    for dims in (8, 100, 384):
        vecs = rng.standard_normal((50, dims)).astype(np.float32)
        center = rng.standard_normal(dims).astype(np.float32) * 0.1
        codes = memory_index.sign_codes(vecs, center)
        assert codes.shape == ((dims + 63) // 64, 50) and codes.dtype == np.uint64
        q = vecs[7]
        qcode = memory_index.sign_codes(q[None, :], center)[:, 0]
        want = ((vecs > center) != (q > center)).sum(axis=1)
        assert memory_index.hamming(codes, 50, qcode).tolist() == want.tolist()


def test_approximate_stage_scores_exactly_and_keeps_the_neighbours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Thresholds lowered so 3000 rows take the sign-code path (normally 20k rows).
    monkeypatch.setattr(memory_index, "APPROX_MIN_ROWS", 500)
    monkeypatch.setattr(memory_index, "MIN_CANDIDATES", 150)
    monkeypatch.setattr(memory_index, "CANDIDATES_PER_RESULT", 15)
    vecs = _clustered(3000, 64)
    idx = VectorIndex(64)
    for i, v in enumerate(vecs):
        kind = "fact" if i % 3 == 0 else "episode"
        idx.add("org", "a", i, v, Attrs(memory_id=f"id-{i}", memory_type=kind, importance=i / 3000))
    agent = idx.agent("org", "a")
    assert agent is not None
    now = dt.datetime.now(dt.UTC).timestamp()
    recalls = []
    for where, keep in (
        (RowFilter(now), lambda i: True),
        (RowFilter(now, memory_type="fact", min_importance=0.3), lambda i: i % 3 == 0 and i >= 900),
    ):
        rows = [i for i in range(3000) if keep(i)]
        for qi in range(0, 3000, 150):
            q = vecs[qi]
            seqs, sims, ids = agent.nearest(q, 10, None, where)
            assert ids.tolist() == [f"id-{s}" for s in seqs.tolist()]
            assert all(keep(s) for s in seqs.tolist())
            np.testing.assert_allclose(sims, vecs[seqs] @ q, rtol=1e-5, atol=1e-6)
            assert list(sims) == sorted(sims, reverse=True)
            truth = _exact(vecs, q, rows, 10)
            assert agent.nearest(q, 10, None, where, exact=True)[0].tolist() == truth
            recalls.append(len(set(seqs.tolist()) & set(truth)) / 10)
    assert np.mean(recalls) >= 0.95
    # Fewer rows pass than the candidates wanted: the search is exact.
    few = RowFilter(now, memory_type="fact", min_importance=0.95)
    rows = [i for i in range(3000) if i % 3 == 0 and i >= 2850]
    assert agent.nearest(vecs[5], 10, None, few)[0].tolist() == _exact(vecs, vecs[5], rows, 10)


def test_concurrent_searches_see_whole_rows_while_the_index_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Searches on another thread during adds, re-adds, removes, retires, growth and
    compaction: every hit's id and score belong together, whichever path is taken."""
    monkeypatch.setattr(memory_index, "APPROX_MIN_ROWS", 300)
    monkeypatch.setattr(memory_index, "MIN_CANDIDATES", 60)
    dims = 32
    vecs = _clustered(4000, dims, seed=5)
    idx = VectorIndex(dims)
    for i in range(400):
        idx.add("org", "a", i, vecs[i], Attrs(memory_id=f"id-{i}"))
    agent = idx.agent("org", "a")
    assert agent is not None
    stop = threading.Event()
    errors: list[BaseException] = []
    searched = [0]

    def searcher() -> None:
        rng = np.random.default_rng(9)
        try:
            while not stop.is_set():
                q = vecs[rng.integers(0, 4000)]
                where = RowFilter(dt.datetime.now(dt.UTC).timestamp())
                seqs, sims, ids = agent.nearest(q, 10, None, where, exact=bool(rng.integers(2)))
                for mid, sim in zip(ids.tolist(), sims.tolist(), strict=True):
                    row = int(mid.split("-")[1]) % 4000
                    assert abs(sim - float(vecs[row] @ q)) < 1e-4, (mid, sim)
                assert list(sims) == sorted(sims, reverse=True)
                searched[0] += 1
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    t = threading.Thread(target=searcher)
    t.start()
    try:
        rng = np.random.default_rng(4)
        live = set(range(400))
        for i in range(400, 4000):
            idx.add("org", "a", i, vecs[i], Attrs(memory_id=f"id-{i}"))
            live.add(i)
            if i % 3 == 0:  # delete an older one
                victim = int(rng.choice(sorted(live)))
                idx.remove(victim)
                live.discard(victim)
            if i % 7 == 0:
                s = int(rng.choice(sorted(live)))
                idx.refresh(s, Attrs(memory_id=f"id-{s}", live=False))  # retired
            if i % 11 == 0:  # re-embedded: same seq, same vector, new row
                s = int(rng.choice(sorted(live)))
                idx.add("org", "a", s, vecs[s], Attrs(memory_id=f"id-{s}"))
            if i % 200 == 0:
                time.sleep(0.001)  # let the searcher in
    finally:
        stop.set()
        t.join()
    assert not errors, errors[0]
    assert searched[0] > 0 and len(agent) == len(live)
    # Afterwards: the live rows, exactly (include_superseded: retired rows count too).
    now = dt.datetime.now(dt.UTC).timestamp()
    every = RowFilter(now, include_superseded=True)
    q = vecs[17]
    assert agent.nearest(q, 10, None, every, exact=True)[0].tolist() == _exact(
        vecs, q, sorted(live), 10
    )


def test_add_many_is_the_same_index_as_adding_row_by_row() -> None:
    """The bulk load (a proxy's start, a catch-up with another proxy's memories): the same
    searches as rows added one at a time, past a capacity rebuild, with a re-embedded
    row (the newer vector wins) and several agents in one call."""
    rng = np.random.default_rng(7)
    n = 300  # several times the first capacity
    vecs = rng.standard_normal((n, 8)).astype(np.float32)
    orgs = ["org"] * n
    agents = ["a" if i % 3 else "b" for i in range(n)]
    attrs = [Attrs(memory_id=f"id-{i}", content=f"word{i} shared") for i in range(n)]
    one, bulk = VectorIndex(8), VectorIndex(8)
    for i in range(n):
        one.add(orgs[i], agents[i], i, vecs[i], attrs[i])
    bulk.add_many(orgs[:100], agents[:100], np.arange(100), vecs[:100], attrs[:100])
    bulk.add_many(orgs[100:], agents[100:], np.arange(100, n), vecs[100:], attrs[100:])
    again = rng.standard_normal((1, 8)).astype(np.float32)  # seq 5 re-embedded
    one.add("org", agents[5], 5, again[0], attrs[5])
    bulk.add_many(["org"], [agents[5]], np.array([5]), again, [attrs[5]])
    assert len(one) == len(bulk) == n
    now = dt.datetime.now(dt.UTC).timestamp()
    for agent in ("a", "b"):
        x, y = one.agent("org", agent), bulk.agent("org", agent)
        assert x is not None and y is not None and len(x) == len(y)
        for q in (*vecs[:20], again[0]):
            q = q / np.linalg.norm(q)
            want = x.nearest(q, 10, None, RowFilter(now), exact=True)
            got = y.nearest(q, 10, None, RowFilter(now), exact=True)
            assert got[0].tolist() == want[0].tolist() and got[2].tolist() == want[2].tolist()
            assert np.allclose(got[1], want[1])
            assert y.nearest(q, 10, None, RowFilter(now))[0].tolist() == want[0].tolist()
        words = ["word7", "word8", "word9"]
        want_kw = x.keyword_hits(words, 5, None, None, RowFilter(now)).seqs.tolist()
        assert (
            want_kw
            and y.keyword_hits(words, 5, None, None, RowFilter(now)).seqs.tolist() == want_kw
        )
