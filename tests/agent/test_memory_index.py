"""The in-RAM vector index: filters applied before the neighbour search, retire, tracking."""

from __future__ import annotations

import datetime as dt

import numpy as np

from proxy.agent.memory_index import Attrs, RowFilter, VectorIndex


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


def test_retire_remove_and_unembedded_tracking() -> None:
    idx, vecs = _index()
    agent = idx.agent("org", "a")
    assert agent is not None
    q = vecs[3] / np.linalg.norm(vecs[3])
    now = dt.datetime.now(dt.UTC).timestamp()
    assert agent.nearest(q, 1, None, RowFilter(now))[0].tolist() == [3]
    idx.retire(3)
    assert 3 not in agent.nearest(q, 40, None, RowFilter(now))[0].tolist()
    assert agent.nearest(q, 1, None, RowFilter(now, include_superseded=True))[0].tolist() == [3]
    for s in range(12):  # enough tombstones to compact on the next growth
        idx.remove(s)
    for s in range(100, 130):
        idx.add("org", "a", s, vecs[s % 40], Attrs(memory_id=f"id-{s}", memory_type="fact"))
    seqs, _, ids = agent.nearest(q, 100, None, RowFilter(now, memory_type="fact"))
    assert all(s >= 12 for s in seqs.tolist())
    assert ids.tolist() == [f"id-{s}" for s in seqs.tolist()]
    assert not idx.has_unembedded("org", "a")
    idx.note_unembedded("org", "a", 500)
    idx.note_unembedded("org", "a", 501)
    assert idx.has_unembedded("org", "a") and not idx.has_unembedded("org", "b")
    idx.add("org", "a", 500, vecs[0], Attrs(memory_id="id-500"))
    idx.remove(501)
    assert not idx.has_unembedded("org", "a")
