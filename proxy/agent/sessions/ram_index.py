"""The session search index in RAM: one agent's events as a vector matrix and BM25.

`session_index` in the agent database is the durable copy (derived from the events,
rebuilt by `rebuild_session_index`); this is its mirror for searching. Why: the SQL
search scanned every vector of the scope per query (`array_cosine_similarity` over the
table, 31 ms at 5k events); here one numpy product over a contiguous float32 matrix
ranks 100k events in a few milliseconds, and the keyword side is an incremental BM25
index (`retrieval.bm25`) instead of a `contains` scan.

One `AgentEvents` per (org, agent), loaded from the table on the agent's first search
and then kept current: the writes of `session_index` (search.index_event, drop_event,
drop_session) note what they did in a per-thread journal, and the session
transaction applies that journal here once it has committed (nothing of a rolled back
transaction arrives); stored vectors arrive from the embedding pump after their UPDATE.
App and user scoping are masks over per-row codes, so another app's or user's events
are never candidates; another agent's events live in another `AgentEvents`.
A removed event (a deleted session, a compaction or repair) is wiped from RAM when its
transaction commits: text, vector and BM25 terms; its slot is reclaimed once a quarter
of the slots are dead (new arrays, rows renumbered, searches in flight keep theirs).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proxy.agent.retrieval.bm25 import Bm25
from proxy.agent.retrieval.vectors import sign_codes

_local = threading.local()


@contextmanager
def journal() -> Any:
    """Collect the index writes made on this thread inside the block."""
    entries: list[tuple] = []
    prev = getattr(_local, "entries", None)
    _local.entries = entries
    try:
        yield entries
    finally:
        _local.entries = prev


def note(entry: tuple) -> None:
    """An index write happened (search.index_event and friends)."""
    entries = getattr(_local, "entries", None)
    if entries is not None:
        entries.append(entry)


@dataclass
class AgentEvents:
    """One agent's indexed events: row i has a vector (or none yet) and metadata."""

    dims: int
    n: int = 0
    vecs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    has_vec: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    alive: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    app: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    user: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # (sid, seq, event_id, author, ts, text), None once removed
    meta: list[tuple | None] = field(default_factory=list)
    pos: dict[tuple[str, int], int] = field(default_factory=dict)
    by_session: dict[str, set[int]] = field(default_factory=dict)  # session -> live seqs
    dead: int = 0  # removed rows still holding a slot
    codes: dict[str, int] = field(default_factory=dict)  # app / user name -> code
    words: Bm25 = field(default_factory=Bm25)
    # 1-bit sign codes of the vectors against `center` (the mean vector when the arrays
    # were last regrown): the shortlist stage of a search above APPROX_MIN_ROWS.
    signs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.uint64))
    center: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))

    def __post_init__(self) -> None:
        self._grow(16)

    def code(self, name: str | None) -> int | None:
        return None if name is None else self.codes.get(name, -1)

    def _grow(self, cap: int) -> None:
        def bigger(a: np.ndarray, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
            out = np.zeros(shape, dtype)
            if self.n:
                out[: self.n] = a[: self.n]
            return out

        vecs = bigger(self.vecs, (cap, self.dims), np.float32)
        has_vec = bigger(self.has_vec, (cap,), bool)
        live = has_vec[: self.n]
        center = (
            vecs[: self.n].mean(axis=0, where=live[:, None]).astype(np.float32)
            if live.any()
            else np.zeros(self.dims, np.float32)
        )
        signs = np.zeros(((self.dims + 63) // 64, cap), np.uint64)
        signs[:, : self.n] = sign_codes(vecs[: self.n], center)
        # Readers snapshot (vecs, has_vec, signs, center): the codes' center travels along.
        self.signs, self.center = signs, center
        self.vecs, self.has_vec = vecs, has_vec
        self.alive = bigger(self.alive, (cap,), bool)
        self.app = bigger(self.app, (cap,), np.int64)
        self.user = bigger(self.user, (cap,), np.int64)

    def add(
        self,
        key: tuple[str, int],
        event_id: str,
        app: str,
        user: str,
        author: str,
        ts: Any,
        text: str,
        vec: np.ndarray | None = None,
    ) -> None:
        self.remove(key)
        if self.n == len(self.alive):
            self._grow(max(16, self.n * 2))
        i = self.n
        self.app[i] = self.codes.setdefault(app, len(self.codes))
        self.user[i] = self.codes.setdefault(user, len(self.codes))
        self.meta.append((key[0], key[1], event_id, author, ts, text))
        if vec is not None:
            self._vector(i, vec)
        self.words.add(i, text)
        self.pos[key] = i
        self.by_session.setdefault(key[0], set()).add(key[1])
        self.alive[i] = True
        self.n = i + 1

    def remove(self, key: tuple[str, int]) -> None:
        """The row is gone at once: its text, vector and terms are wiped (a deleted
        conversation must not linger in RAM), its slot reclaimed by `compact`."""
        i = self.pos.pop(key, None)
        if i is None:
            return
        self.alive[i] = False
        self.words.remove(i)
        self.meta[i] = None
        self.has_vec[i] = False
        self.vecs[i] = 0.0
        self.dead += 1
        seqs = self.by_session.get(key[0])
        if seqs is not None:
            seqs.discard(key[1])
            if not seqs:
                del self.by_session[key[0]]

    def drop_session(self, session_id: str) -> None:
        for seq in list(self.by_session.get(session_id, ())):
            self.remove((session_id, seq))

    def tidy(self) -> None:
        """Compact once a quarter of the slots are dead: O(n) work amortized."""
        if self.dead * 4 > self.n:
            self.compact()

    def compact(self) -> None:
        """Drop the dead rows' slots: new arrays (searches in flight keep their snapshot
        of the old ones), rows renumbered, app and user codes of only the live rows."""
        keep = np.flatnonzero(self.alive[: self.n])
        old_codes = {c: name for name, c in self.codes.items()}
        app = [old_codes[c] for c in self.app[keep].tolist()]
        user = [old_codes[c] for c in self.user[keep].tolist()]
        vecs, has_vec = self.vecs[keep], self.has_vec[keep]
        meta = [self.meta[i] for i in keep.tolist()]
        self.words.remap({int(old): new for new, old in enumerate(keep.tolist())})
        self.n, self.dead, self.codes = 0, 0, {}
        self.vecs = np.zeros((0, self.dims), np.float32)
        self.has_vec = np.zeros(0, bool)
        self._grow(max(16, 2 * len(keep)))
        n = len(keep)
        self.vecs[:n], self.has_vec[:n], self.alive[:n] = vecs, has_vec, True
        self.app[:n] = [self.codes.setdefault(a, len(self.codes)) for a in app]
        self.user[:n] = [self.codes.setdefault(u, len(self.codes)) for u in user]
        self.meta, self.n = meta, n
        self.pos = {(m[0], m[1]): i for i, m in enumerate(meta)}
        live = has_vec
        self.center = (
            vecs.mean(axis=0, where=live[:, None]).astype(np.float32)
            if live.any()
            else np.zeros(self.dims, np.float32)
        )
        self.signs[:, :n] = sign_codes(self.vecs[:n], self.center)

    def set_vector(self, key: tuple[str, int], vec: np.ndarray) -> None:
        i = self.pos.get(key)
        if i is not None:
            self._vector(i, vec)

    def _vector(self, i: int, vec: np.ndarray) -> None:
        self.vecs[i] = vec
        self.signs[:, i] = sign_codes(self.vecs[i : i + 1], self.center)[:, 0]
        self.has_vec[i] = True

    def mask(self, app: str | None, user: str | None) -> np.ndarray:
        m = self.alive[: self.n].copy()
        if app is not None:
            m &= self.app[: self.n] == self.code(app)
        if user is not None:
            m &= self.user[: self.n] == self.code(user)
        return m


class EventMatrix:
    """Every loaded agent's `AgentEvents`, by (org, agent)."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.agents: dict[tuple[str, str], AgentEvents] = {}
        self.writes: dict[tuple[str, str], int] = {}  # per agent, loaded or not

    def get(self, org: str, agent: str) -> AgentEvents | None:
        return self.agents.get((org, agent))

    def forget(self, org: str, agent: str) -> None:
        self.agents.pop((org, agent), None)
        self.writes[(org, agent)] = self.writes.get((org, agent), 0) + 1

    def apply(self, entries: list[tuple]) -> None:
        """A committed transaction's index writes (see `note`)."""
        for entry in entries:
            kind, org, agent = entry[:3]
            self.writes[(org, agent)] = self.writes.get((org, agent), 0) + 1
            a = self.agents.get((org, agent))
            if a is None:
                continue
            if kind == "add":
                sid, seq, eid, app, user, author, ts, text = entry[3:]
                a.add((sid, seq), eid, app, user, author, ts, text)
            elif kind == "drop":
                a.remove((entry[3], entry[4]))
            elif kind == "drop_session":
                a.drop_session(entry[3])
        for org, agent in {e[1:3] for e in entries}:
            a = self.agents.get((org, agent))
            if a is not None:
                a.tidy()

    def vectors(self, rows: list[tuple], vecs: np.ndarray) -> None:
        """Stored vectors of rows (org, agent, session, seq, ...)."""
        for r, v in zip(rows, vecs, strict=True):
            a = self.agents.get((r[0], r[1]))
            if a is not None:
                a.set_vector((r[2], r[3]), _unit(v))


def dot(mat: np.ndarray, q: np.ndarray) -> np.ndarray:
    """mat @ q on one thread (numpy's SIMD loop, not BLAS: see memory/index.py)."""
    if hasattr(np, "vecdot"):  # numpy >= 2
        return np.vecdot(mat, q)
    return np.einsum("ij,j->i", mat, q)


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def load(cur: Any, index_table: str, org: str, agent: str, dims: int) -> AgentEvents:
    """One agent's events from the durable index table."""
    out = AgentEvents(dims)
    table = cur.execute(
        f"SELECT session_id, seq, event_id, app_name, user_id, author, timestamp, text, "
        f"embedding FROM {index_table} WHERE org_id = ? AND agent_id = ? ORDER BY session_id, seq",
        [org, agent],
    ).to_arrow_table()
    n = table.num_rows
    if not n:
        return out
    out._grow(n + 16)
    cols = {name: table.column(name).to_pylist() for name in table.column_names[:-1]}
    emb = table.column("embedding")
    valid = np.asarray(emb.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    vals = emb.combine_chunks()
    flat = np.asarray(vals.values.to_numpy(zero_copy_only=False), dtype=np.float32)
    # Null lists still occupy their slots in the child array of a fixed-size list.
    mat = flat.reshape(-1, dims)[:n] if len(flat) >= n * dims else np.zeros((n, dims), np.float32)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    mat = mat / np.where(norms > 0, norms, 1.0)
    if valid.any():
        out.center = mat[valid].mean(axis=0).astype(np.float32)
    for i in range(n):
        out.add(
            (cols["session_id"][i], cols["seq"][i]),
            cols["event_id"][i],
            cols["app_name"][i],
            cols["user_id"][i],
            cols["author"][i],
            cols["timestamp"][i],
            cols["text"][i],
        )
    # The vectors in bulk (rows 0..n-1 in load order), codes against the loaded mean.
    out.vecs[:n][valid] = mat[valid]
    out.has_vec[:n] = valid
    out.signs[:, :n] = sign_codes(out.vecs[:n], out.center)
    return out
