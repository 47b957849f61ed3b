"""In-RAM nearest-neighbour index over each agent's memory vectors.

Why not (only) DuckDB's HNSW index: memory search is always scoped to one agent,
whose memories are usually a small slice of the table, and a global HNSW index can
only post-filter, so it misses an agent's neighbours unless it oversamples wildly.
Measured on this machine (2 cores, 384 dims, 100k vectors): building the HNSW index
took 217 s (about 2 ms per inserted vector, and it must be rebuilt in full after an
unclean stop because it has no WAL recovery); an exact scan in SQL took 140 ms; the
same exact scan as one numpy matrix-vector product took 5-7 ms. So every agent's
vectors live here as one float32 matrix (1.5 KB of RAM per memory), the durable copy
lives in `hatidata_internal.agent_memory_vectors`, and this index is rebuilt from that
table at start. Products run on one thread (`dot`: np.vecdot, 5-6 ms at 100k), not
through BLAS: OpenBLAS's sgemv splits over both cores and was no faster here (6 ms
idle, 8-16 ms while another process held a core), and its threads spin on after each
call, taking the core that DuckDB and the model need next (search with the exact scan
forced, 100k, model call included: p50 27.6 and 28.6 ms vs 29.5 and 30.0 ms via BLAS).

Exact below `APPROX_MIN_ROWS`; above it, two stages. That scan reads 1.5 KB per
memory (153 MB at 100k: memory-bandwidth bound), so each row also keeps a 1-bit sign
code of its vector (48 bytes at 384 dims: bit i = vector[i] > center[i], the center
being the mean of the agent's vectors when the arrays were last rebuilt). A search
ranks all rows by Hamming distance to the query's code (0.4 ms at 100k), takes the
`candidates(k)` closest (at least 1000, 40 per result asked for) and ranks those by
exact cosine, so scores are exact and only membership is approximate. Recall@10 of
search's 50 candidates against exact search at 100k (bench/memory.py, 50 queries):
1.000 on its synthetic clustered vectors, with or without a filter keeping 1 row in 8;
on all-MiniLM-L6-v2 embeddings of 100k distinct sentences from the Python standard
library's docstrings (--text-vectors), 1.000 without and 0.998 with that filter (200
queries offline: 0.9995, recall@50 0.997). A clustered (IVF) pre-filter was rejected:
on the same sentences it reached only 0.946 recall@10 while scanning 11% of the rows.
`nearest(..., exact=True)` forces the exact scan.

Beside each vector the index keeps the memory's id, the few columns search filters on
(`Attrs`: importance, expires_at, memory_type, session_id, and whether it is retired)
and what its hybrid score needs (created_at, confidence), so the filters narrow the
neighbour search without scanning the table. When the content is at most `TEXT_IN_RAM`
characters it also keeps the memory's whole row (`Attrs.row`, the SELECT_COLUMNS tuple),
so search builds its results without reading the table: DuckDB answers a read of 10
rows by primary key from 100k with a hash join over every projected column (1.4-2.6 ms,
more than the rest of a search), and that scan also evicts the model's weights from the
CPU cache. The copies stay exact because every write of a memory row refreshes them:
each UPDATE of the memory table returns the rows it changed (`RETURNING seq,
SELECT_COLUMNS`) and hands them to `refresh`, and a memory is added here with its row as
read after its embedding was stored. A row with a longer content is read from the table.

Concurrency: all mutations happen on the event-loop thread; searches may run on a
worker thread. Each agent's state is an immutable tuple (seqs, vecs, attrs, n, codes,
center) swapped in one assignment; appends write past every reader's `n`, deletes only
tombstone a row (seq -1), a refresh only replaces one row's mutable copies (each an
atomic store), and growth and compaction build new arrays (codes recomputed against a
new center). So readers never see a torn row, nor codes computed against another center
than the one they hold. (A reader may combine one row's copies from just before and
just after a refresh; search checks its filters again on the row it returns.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from proxy.agent.memory.index_types import Attrs, Hits, RowFilter, value_code
from proxy.agent.memory.pending import Unembedded
from proxy.agent.retrieval.bm25 import Bm25
from proxy.agent.retrieval.vectors import (
    APPROX_MIN_ROWS,
    POPCOUNT,
    dot,
    hamming,  # noqa: F401  (re-exported: tests check it here)
    shortlist,
    sign_codes,
)

_TOMB = -1


class _Cols:
    """Per-row attribute arrays, parallel to the vector matrix."""

    FIELDS = (("imp", np.float64), ("exp", np.float64), ("live", np.bool_))
    FIELDS += (("mtype", np.int64), ("sess", np.int64))
    FIELDS += (("created", np.float64), ("conf", np.float64))
    FIELDS += (("ids", object), ("texts", object), ("rows", object))

    def __init__(self, cap: int) -> None:
        for name, dtype in self.FIELDS:
            setattr(
                self,
                name,
                np.zeros(cap, dtype=dtype) if dtype is not object else np.empty(cap, dtype=object),
            )

    def copy_rows(self, rows: Any, cap: int) -> _Cols:
        out = _Cols(cap)
        for name, _ in self.FIELDS:
            src = getattr(self, name)[rows]
            getattr(out, name)[: len(src)] = src
        return out


def _top(sims: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k largest values, best first (ties in position order)."""
    m = len(sims)
    idx = np.argpartition(sims, m - k)[m - k :] if k < m else np.arange(m)
    return idx[np.argsort(-sims[idx], kind="stable")]


MIN_CANDIDATES = 1_000
CANDIDATES_PER_RESULT = 40


def candidates(k: int) -> int:
    """How many rows the sign-code stage keeps for exact ranking when k are asked for."""
    return max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * k)


class _State(NamedTuple):
    seqs: np.ndarray  # int64, _TOMB for a deleted row
    vecs: np.ndarray  # float32 (cap, dims), unit rows
    cols: _Cols
    n: int  # rows in use
    codes: np.ndarray  # uint64 (words, cap): sign codes against `center`
    center: np.ndarray


class AgentVectors:
    """One agent's vectors: rows keyed by the memory's `seq`."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._state = self._alloc(16, np.zeros(dims, dtype=np.float32))
        self._pos: dict[int, int] = {}
        # BM25 over the same rows (keyed by row position): search's keyword pool.
        self.words = Bm25()

    def _alloc(self, cap: int, center: np.ndarray) -> _State:
        return _State(
            np.full(cap, _TOMB, dtype=np.int64),
            np.zeros((cap, self.dims), dtype=np.float32),
            _Cols(cap),
            0,
            np.zeros(((self.dims + 63) // 64, cap), dtype=np.uint64),
            center,
        )

    def __len__(self) -> int:
        return len(self._pos)

    def add(self, seq: int, vec: np.ndarray, attrs: Attrs | None = None) -> None:
        if attrs is None:
            attrs = Attrs(memory_id="")
        if seq in self._pos:  # re-embedded: retire the old row, append the new one
            self.remove(seq)
        st = self._state
        if st.n == len(st.seqs):
            dead = st.n - len(self._pos)
            keep = np.nonzero(st.seqs[: st.n] != _TOMB)[0] if dead > st.n // 4 else None
            st = self._rebuild(keep)
        seqs, vecs, cols, n, codes, center = st
        vecs[n] = vec
        codes[:, n] = sign_codes(vecs[n : n + 1], center)[:, 0]
        seqs[n] = seq
        self._put(cols, n, seq, attrs)
        self._state = st._replace(n=n + 1)

    def add_many(self, seqs: list[int], vecs: np.ndarray, attrs: list[Attrs]) -> None:
        """`add` of many rows (unit vectors): their vectors and sign codes are written as
        one block, not row by row (a proxy loading or catching up with many memories)."""
        for seq in seqs:
            if seq in self._pos:  # re-embedded: retire the old row
                self.remove(seq)
        k = len(seqs)
        st = self._state
        if st.n + k > len(st.seqs):
            dead = st.n - len(self._pos)
            keep = np.nonzero(st.seqs[: st.n] != _TOMB)[0] if dead > st.n // 4 else None
            st = self._rebuild(keep, room=k)
        n = st.n
        if not self._pos:  # an empty index: codes against these vectors' mean
            st = st._replace(center=vecs.mean(axis=0, dtype=np.float64).astype(np.float32))
        st.vecs[n : n + k] = vecs
        st.codes[:, n : n + k] = sign_codes(st.vecs[n : n + k], st.center)
        st.seqs[n : n + k] = seqs
        cols = st.cols
        for row, (seq, a) in enumerate(zip(seqs, attrs, strict=True), n):
            self._put(cols, row, seq, a)
        self._state = st._replace(n=n + k)

    def _put(self, cols: _Cols, row: int, seq: int, attrs: Attrs) -> None:
        """A row's attribute columns and its words (its vector and code are the caller's)."""
        cols.imp[row] = attrs.importance
        cols.exp[row] = attrs.expires_at.timestamp() if attrs.expires_at is not None else np.inf
        cols.live[row] = attrs.live
        cols.mtype[row] = value_code(attrs.memory_type)
        cols.sess[row] = value_code(attrs.session_id)
        cols.ids[row] = attrs.memory_id
        cols.created[row] = attrs.created_at
        cols.conf[row] = attrs.confidence
        cols.texts[row] = attrs.content
        cols.rows[row] = attrs.row
        self._pos[seq] = row
        text = attrs.words if attrs.words is not None else attrs.content
        if text:
            self.words.add(row, text)

    def remove(self, seq: int) -> bool:
        row = self._pos.pop(seq, None)
        if row is None:
            return False
        self._state.seqs[row] = _TOMB
        self.words.remove(row)
        return True

    def refresh(self, seq: int, attrs: Attrs) -> None:
        """The memory's row changed (retired, decayed, accessed, ...): take the new copies.
        Only the mutable columns can differ; the others are immutable after insert."""
        row = self._pos.get(seq)
        if row is not None:
            cols = self._state.cols
            cols.live[row] = attrs.live
            cols.conf[row] = attrs.confidence
            cols.rows[row] = attrs.row

    def _rebuild(self, keep: np.ndarray | None, room: int = 1) -> _State:
        """New arrays with room to grow (for `room` more rows at least): all rows, or only
        `keep` (compaction). The sign codes are recomputed against the mean of the kept
        vectors."""
        old = self._state
        rows: Any = slice(0, old.n) if keep is None else keep
        m = old.n if keep is None else len(keep)
        st = self._alloc(max(16, m * 2, m + room), old.center)
        st.seqs[:m] = old.seqs[rows]
        st.vecs[:m] = old.vecs[rows]
        alive = st.seqs[:m] != _TOMB
        if alive.any():  # the mean of the live vectors
            total = st.vecs[:m].sum(axis=0, where=alive[:, None], dtype=np.float64)
            st = st._replace(center=(total / alive.sum()).astype(np.float32))
        st.codes[:, :m] = sign_codes(st.vecs[:m], st.center)
        st = st._replace(cols=old.cols.copy_rows(rows, len(st.seqs)), n=m)
        if keep is not None:
            self._pos = {int(s): i for i, s in enumerate(st.seqs[:m])}
            self.words.remap({int(old): new for new, old in enumerate(keep)})
        self._state = st
        return st

    def _mask(self, st: _State, where: RowFilter | None) -> np.ndarray:
        n, cols = st.n, st.cols
        valid = st.seqs[:n] != _TOMB
        if where is None:
            return valid
        if not where.include_superseded:
            valid &= cols.live[:n]
        valid &= cols.exp[:n] > where.now
        if where.memory_type is not None:
            valid &= cols.mtype[:n] == value_code(where.memory_type)
        if where.session_id is not None:
            valid &= cols.sess[:n] == value_code(where.session_id)
        if where.min_importance is not None:
            valid &= cols.imp[:n] >= where.min_importance
        return valid

    def nearest(
        self,
        query: np.ndarray,
        k: int,
        allowed: np.ndarray | None = None,
        where: RowFilter | None = None,
        exact: bool = False,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The k rows most similar to `query` (unit vector) among those passing `where`
        and `allowed` (seqs): (seqs, cosine similarities, memory ids), best first.
        Approximate membership (exact scores) above APPROX_MIN_ROWS unless `exact`."""
        return self.hits(query, k, allowed, where, exact)[:3]

    def hits(
        self,
        query: np.ndarray,
        k: int,
        allowed: np.ndarray | None = None,
        where: RowFilter | None = None,
        exact: bool = False,
    ) -> Hits:
        """`nearest`, with the scoring columns of each row."""
        st = self._state  # one snapshot: rows and columns always agree
        pos, sims = self._nearest(st, query, k, allowed, where, exact)
        c = st.cols
        return Hits(
            st.seqs[pos],
            sims,
            c.ids[pos],
            c.texts[pos],
            c.created[pos],
            c.imp[pos],
            c.conf[pos],
            c.rows[pos],
        )

    def keyword_hits(
        self,
        tokens: list[str],
        k: int,
        query: np.ndarray | None,
        allowed: np.ndarray | None = None,
        where: RowFilter | None = None,
        rare_only: bool = True,
    ) -> Hits:
        """The k rows with the best BM25 score for `tokens` among those passing `where` and
        `allowed`, best first, with their cosine similarity to `query` (0 without one).

        With `rare_only` (search's keyword pool) only the rare tokens count: those held by
        at most k memories of the agent. A token held by more cannot bring all its holders
        into a pool of k anyway, and the pool is for the exact words the cosine cut-off
        left out; a query of common words only then costs next to nothing here."""
        words = self.words
        if rare_only:
            tokens = [t for t in tokens if 0 < words.df(t) <= k]
        st = self._state
        pos, bm25 = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        if tokens:
            valid = self._mask(st, where)
            if allowed is not None:
                valid &= np.isin(st.seqs[: st.n], allowed)
            pos, bm25 = words.top(tokens, k, valid)
        if query is not None and len(pos):
            q = np.ascontiguousarray(query, dtype=np.float32)
            sims = dot(st.vecs[pos], q)
        else:
            sims = np.zeros(len(pos), dtype=np.float32)
        c = st.cols
        return Hits(
            st.seqs[pos], sims, c.ids[pos], c.texts[pos], c.created[pos], c.imp[pos],
            c.conf[pos], c.rows[pos], bm25,
        )  # fmt: skip

    def _nearest(
        self,
        st: _State,
        query: np.ndarray,
        k: int,
        allowed: np.ndarray | None,
        where: RowFilter | None,
        exact: bool,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Row positions of the nearest rows in `st` and their similarities."""
        n = st.n
        seqs = st.seqs[:n]
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        if n == 0 or k <= 0:
            return empty
        q = np.ascontiguousarray(query, dtype=np.float32)  # float64 would copy the matrix
        valid = self._mask(st, where)
        if allowed is not None:
            valid &= np.isin(seqs, allowed)
        live = int(np.count_nonzero(valid))
        k = min(k, live)
        if k == 0:
            return empty
        rows: np.ndarray | None = None
        c = candidates(k)
        if not exact and POPCOUNT is not None and n >= APPROX_MIN_ROWS and live > c:
            rows = self._shortlist(st, q, valid, c)
            sims = dot(st.vecs[rows], q)
        elif live == n:
            sims = dot(st.vecs[:n], q)
        else:  # score only the rows that pass (gathered first when they are few)
            rows = np.flatnonzero(valid)
            sims = dot(st.vecs[rows], q) if live * 2 < n else dot(st.vecs[:n], q)[rows]
        idx = _top(sims, k)
        return (idx if rows is None else rows[idx]), sims[idx]

    def _shortlist(self, st: _State, q: np.ndarray, valid: np.ndarray, c: int) -> np.ndarray:
        """Rows passing `valid` whose sign codes are nearest the query's: the c closest
        and every row tied with the last of them."""
        return shortlist(st.codes, st.n, st.center, q, valid, c)


class VectorIndex:
    """All agents' vectors, by (org_id, agent_id)."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._agents: dict[tuple[str, str], AgentVectors] = {}
        self._owner: dict[int, tuple[str, str]] = {}  # seq -> agent key, for removal
        # Memories stored without a vector yet, and their rows while few enough.
        self.unembedded = Unembedded()
        # Told the memory ids of rows changed here (rows.refresh_index): with a DuckLake,
        # shared.py publishes them to the other proxies.
        self.on_refresh: Callable[[list[str]], None] | None = None

    def agent(self, org_id: str, agent_id: str) -> AgentVectors | None:
        return self._agents.get((org_id, agent_id))

    def count(self, org_id: str, agent_id: str) -> int:
        a = self._agents.get((org_id, agent_id))
        return len(a) if a is not None else 0

    def __len__(self) -> int:
        return len(self._owner)

    def add(
        self, org_id: str, agent_id: str, seq: int, vec: np.ndarray, attrs: Attrs | None = None
    ) -> None:
        key = (org_id, agent_id)
        a = self._agents.get(key)
        if a is None:
            a = self._agents[key] = AgentVectors(self.dims)
        norm = float(np.linalg.norm(vec))
        a.add(seq, (vec / norm if norm > 0 else vec).astype(np.float32, copy=False), attrs)
        self._owner[seq] = key
        self.unembedded.done(seq)

    def add_many(
        self,
        org_ids: list[str],
        agent_ids: list[str],
        seqs: np.ndarray,
        vecs: np.ndarray,
        attrs: list[Attrs] | None = None,
    ) -> None:
        """`add` of many rows: normalised together and added a block per agent."""
        if attrs is None:
            attrs = [Attrs(memory_id="") for _ in org_ids]
        if not len(org_ids):
            return
        vecs = np.asarray(vecs, dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = np.divide(vecs, norms, out=vecs.copy(), where=norms > 0)
        by_agent: dict[tuple[str, str], list[int]] = {}
        for i, key in enumerate(zip(org_ids, agent_ids, strict=True)):
            by_agent.setdefault(key, []).append(i)
        for key, rows in by_agent.items():
            a = self._agents.get(key)
            if a is None:
                a = self._agents[key] = AgentVectors(self.dims)
            picked = [int(seqs[i]) for i in rows]
            if len(set(picked)) < len(picked):  # a seq twice: the last one wins, as with add
                for i in rows:
                    a.add(int(seqs[i]), vecs[i], attrs[i])
            else:
                a.add_many(picked, vecs[rows], [attrs[i] for i in rows])
            for seq in picked:
                self._owner[seq] = key
                self.unembedded.done(seq)

    def remove(self, seq: int) -> None:
        self.unembedded.done(seq)
        key = self._owner.pop(seq, None)
        if key is not None:
            self._agents[key].remove(seq)

    def refresh(self, seq: int, attrs: Attrs) -> None:
        """A memory row was updated: see `AgentVectors.refresh`."""
        key = self._owner.get(seq)
        if key is not None:
            self._agents[key].refresh(seq, attrs)
        self.unembedded.refresh(seq, attrs.row)

    def clear(self) -> None:
        self._agents.clear()
        self._owner.clear()
        self.unembedded.clear()
