"""Search over past conversations: an index derived from session events.

`session_index` holds, per event, its text (lower-cased for keyword matching) and its
vector (NULL until the embedding pump fills it). The sessions are the source of truth:
`rebuild` derives a scope's index rows again from the events and swaps them in
(sessions/rebuild.py), so a corrupt index, a model change or a format change is
repaired by one call.

A search draws candidates from both sides, from the RAM mirror of the index
(`ram_index`: a float32 matrix and an incremental BM25 index per agent, app and user
scopes as masks): the vector side's top POOL (max(50, 5 x top_k)) by cosine similarity
and the keyword side's top POOL by BM25 (`retrieval.bm25`). Hybrid interleaves the two
ranked lists with `retrieval.fuse.interleave` (memory search uses the same): an event's
place is its better rank on either side, then its rank on the other side (an event both
sides drew comes before one only one side drew), then session id and seq. So the hybrid
top k holds each side's top k/2 whatever the other side says: an exact keyword hit is
never lost to a cosine cut-off, nor a paraphrase to a keyword match. `score` =
(1/best + 1/(best x other)) / 2 (ranks from 1; the second term only when both sides drew
it), in (0, 1]: it orders results exactly as above. `semantic` is the cosine similarity,
`keyword` the BM25 score (None when that side did not draw the event). `mode` 'vector'
or 'keyword' uses one side.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from proxy.agent.retrieval.bm25 import terms as bm25_terms
from proxy.agent.retrieval.fuse import interleave
from proxy.agent.retrieval.vectors import APPROX_MIN_ROWS, POPCOUNT, dot, shortlist
from proxy.agent.sessions import ram_index
from proxy.agent.sessions import rebuild as rebuilder
from proxy.agent.sessions.tables import EVENTS, INDEX
from proxy.agent.sessions.window import event_text
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.db.agent_lake_views import is_shared

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.sessions")

MODES = ("hybrid", "vector", "keyword")
POOL = 50
# Rows per round of the embedding pump: up to this many are taken as they are (no wait for
# more), so a lone append is embedded at once; a bulk append is taken in rounds this big
# (the model worker batches them), each round's SELECT and UPDATE costing once per round.
BATCH = 256
MAX_TOP_K = 100


def install(cur: duckdb.DuckDBPyConnection, dims: int) -> None:
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {INDEX} (
            org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
            session_id VARCHAR NOT NULL, seq BIGINT NOT NULL,
            event_id VARCHAR NOT NULL, app_name VARCHAR NOT NULL, user_id VARCHAR NOT NULL,
            author VARCHAR NOT NULL, timestamp TIMESTAMPTZ NOT NULL,
            text VARCHAR NOT NULL, lower_text VARCHAR NOT NULL,
            embedding FLOAT[{dims}],
            PRIMARY KEY (org_id, agent_id, session_id, seq))"""
    )
    rebuilder.install(cur, dims)


def index_event(
    cur: duckdb.DuckDBPyConnection, who: Identity, session: dict[str, Any], event: dict
) -> None:
    """Add one event's row (no vector yet), in the append's transaction. In the lake a
    transaction writes the lake only: the index follows it from there (lake_feed.py)."""
    if not is_shared(EVENTS):
        index_row(cur, who.org_id, who.agent_id, session, event)


def index_row(
    cur: duckdb.DuckDBPyConnection, org: str, agent: str, session: dict[str, Any], event: dict
) -> None:
    text = event_text(event)
    ram_index.note(
        ("add", org, agent, session["session_id"], event["seq"])
        + (event["event_id"], session["app_name"], session["user_id"], event["author"])
        + (event["timestamp"], text)
    )
    # DELETE then INSERT, not INSERT OR REPLACE: DuckDB's conflict check cost ~4 ms more
    # per row than both statements (most of append_event's time; bench/agent_calls.py).
    cur.execute(
        f"DELETE FROM {INDEX} WHERE org_id = ? AND agent_id = ? AND session_id = ? AND seq = ?",
        [org, agent, session["session_id"], event["seq"]],
    )
    cur.execute(
        f"INSERT INTO {INDEX} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        [
            org,
            agent,
            session["session_id"],
            event["seq"],
            event["event_id"],
            session["app_name"],
            session["user_id"],
            event["author"],
            event["timestamp"],
            text,
            text.lower(),
        ],
    )


def drop_event(cur: duckdb.DuckDBPyConnection, who: Identity, session_id: str, seq: int) -> None:
    if not is_shared(EVENTS):
        drop_row(cur, who.org_id, who.agent_id, session_id, seq)


def index_rows(
    cur: duckdb.DuckDBPyConnection,
    rows: list[tuple[str, str, dict[str, Any], dict]],
    fresh: bool = False,
) -> None:
    """`index_row` of many events (org, agent, session, event) in two statements, not two
    per event (a proxy catching up with a lake of many events); `fresh`: none of them is
    in the index (no DELETE)."""
    import pyarrow as pa

    if not rows:
        return
    cols: dict[str, list[Any]] = {c: [] for c in _ROW_COLUMNS}
    for org, agent, session, event in rows:
        text = event_text(event)
        values = (
            (org, agent, session["session_id"], event["seq"], event["event_id"])
            + (session["app_name"], session["user_id"], event["author"], event["timestamp"])
            + (text,)
        )
        ram_index.note(("add", *values))
        for c, v in zip(_ROW_COLUMNS, values + (text.lower(),), strict=True):
            cols[c].append(v)
    cur.register("_hati_session_rows", pa.table(cols))
    try:
        if not fresh:
            cur.execute(
                f"DELETE FROM {INDEX} i USING _hati_session_rows r WHERE i.org_id = r.org_id"
                " AND i.agent_id = r.agent_id AND i.session_id = r.session_id AND i.seq = r.seq"
            )
        cur.execute(
            f"INSERT INTO {INDEX} SELECT {', '.join(_ROW_COLUMNS)}, NULL FROM _hati_session_rows"
        )
    finally:
        cur.unregister("_hati_session_rows")


_ROW_COLUMNS = (
    "org_id", "agent_id", "session_id", "seq", "event_id", "app_name", "user_id", "author",
    "timestamp", "text", "lower_text",
)  # fmt: skip


def drop_row(
    cur: duckdb.DuckDBPyConnection, org: str, agent: str, session_id: str, seq: int
) -> None:
    ram_index.note(("drop", org, agent, session_id, seq))
    cur.execute(
        f"DELETE FROM {INDEX} WHERE org_id = ? AND agent_id = ? AND session_id = ? AND seq = ?",
        [org, agent, session_id, seq],
    )


def drop_session(cur: duckdb.DuckDBPyConnection, who: Identity, session_id: str) -> None:
    if is_shared(EVENTS):
        return
    ram_index.note(("drop_session", who.org_id, who.agent_id, session_id))
    cur.execute(
        f"DELETE FROM {INDEX} WHERE org_id = ? AND agent_id = ? AND session_id = ?",
        [who.org_id, who.agent_id, session_id],
    )


class EventIndex:
    """Fills missing vectors in the background and answers searches."""

    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        # One filler at a time (the pump, a rebuild): two would update the same rows.
        self._filling = asyncio.Lock()
        self.matrix = ram_index.EventMatrix(layer.dims)
        self._loading = asyncio.Lock()

    def poke(self) -> None:
        self._wake.set()

    async def start(self) -> None:
        if self.layer.semantic.worker is not None:
            self._task = asyncio.create_task(self._pump(), name="hatiproxy-session-embed")
            self._wake.set()  # rows left unembedded by the last run

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _pump(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                while await self.embed_pending(BATCH):
                    pass
            except Exception:
                log.exception("session index embedding round failed")

    async def embed_pending(self, limit: int, who: Identity | None = None) -> int:
        """Embed up to `limit` rows without a vector (only `who`'s when given)."""
        where = "embedding IS NULL"
        args: list[Any] = []
        if who is not None:
            where += " AND org_id = ? AND agent_id = ?"
            args = [who.org_id, who.agent_id]

        def pending(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
            return cur.execute(
                f"SELECT org_id, agent_id, session_id, seq, text FROM {INDEX} WHERE {where} "
                "ORDER BY timestamp LIMIT ?",
                [*args, limit],
            ).fetchall()

        async with self._filling:
            rows = await self.layer.db.run(pending)
            if not rows:
                return 0
            texts = [r[4] or " " for r in rows]
            vecs = np.asarray(await self.layer.semantic.worker.submit(texts, "passage"))
            await self.layer.db.run(lambda cur: _store(cur, rows, vecs, self.layer.dims))
            self.matrix.vectors(rows, vecs)
        return len(rows)

    def committed(self, entries: list[tuple]) -> None:
        """A session transaction committed these index writes: the RAM mirror follows."""
        self.matrix.apply(entries)

    async def _agent(self, who: Identity) -> ram_index.AgentEvents:
        """The agent's RAM index, loaded from the table on first use."""
        key = (who.org_id, who.agent_id)
        found = self.matrix.get(*key)
        if found is not None:
            return found
        async with self._loading:
            found = self.matrix.get(*key)
            if found is not None:
                return found
            for _ in range(3):  # a write committed during the load: load again
                before = self.matrix.writes.get(key, 0)
                found = await self.layer.db.read(
                    lambda cur: ram_index.load(cur, INDEX, *key, self.layer.dims)
                )
                if self.matrix.writes.get(key, 0) == before:
                    break
            self.matrix.agents[key] = found
            return found

    async def search(
        self,
        who: Identity,
        query: str,
        app_name: str | None,
        user_id: str | None,
        top_k: int,
        mode: str,
    ) -> list[dict[str, Any]]:
        if not isinstance(query, str) or not query.strip():
            raise AgentError.invalid("query must be a non-empty string")
        if mode not in MODES:
            raise AgentError.invalid(f"mode must be one of {', '.join(MODES)}")
        if not isinstance(top_k, int) or not 0 < top_k <= MAX_TOP_K:
            raise AgentError.invalid(f"top_k must be between 1 and {MAX_TOP_K}")
        qvec = None
        if mode != "keyword":
            if self.layer.semantic.worker is None:
                raise AgentError.unavailable("vector search needs an embedding model")
            qvec = np.asarray(await self.layer.semantic.worker.embed_now([query], "query"))[0]
            qvec = (qvec / (np.linalg.norm(qvec) or 1.0)).astype(np.float32)
        words = bm25_terms(query) if mode != "vector" else []
        pool = max(POOL, top_k * 5)
        agent = await self._agent(who)
        # A snapshot: rows past n, or arrays regrown meanwhile, are not this search's.
        n, vecs, has_vec = agent.n, agent.vecs, agent.has_vec
        signs, center, meta = agent.signs, agent.center, agent.meta
        mask = agent.mask(app_name, user_id)
        kw_rows, kw_scores = agent.words.top(words, pool, mask) if words else _NONE
        vec_rows, sims = _NONE
        if qvec is not None:
            # The product releases the GIL: off the loop, beside other work.
            vec_rows, sims = await asyncio.to_thread(
                _nearest, vecs, has_vec, mask, n, qvec, pool, (signs, center)
            )
        return _fuse(meta, vecs, has_vec, qvec, vec_rows, sims, kw_rows, kw_scores, top_k)

    async def rebuild(
        self,
        who: Identity,
        app_name: str | None,
        user_id: str | None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Derive the scope's index rows from the sessions again, vectors included
        (sessions/rebuild.py); the RAM mirror is reloaded by the next search."""
        async with self._filling:  # the pump waits: one writer of the vectors
            out = await rebuilder.rebuild(self.layer, who, app_name, user_id, progress)
            self.matrix.forget(who.org_id, who.agent_id)
        return out


def _store(cur: duckdb.DuckDBPyConnection, rows: list[tuple], vecs: np.ndarray, dims: int) -> None:
    """The vectors of `rows` (org, agent, session, seq, text), in one UPDATE."""
    import pyarrow as pa

    table = pa.table(
        {
            "org_id": [r[0] for r in rows],
            "agent_id": [r[1] for r in rows],
            "session_id": [r[2] for r in rows],
            "seq": pa.array([r[3] for r in rows], pa.int64()),
            "embedding": pa.FixedSizeListArray.from_arrays(
                pa.array(vecs.astype(np.float32).ravel()), dims
            ),
        }
    )
    cur.register("_hati_session_vecs", table)
    try:
        cur.execute(
            f"UPDATE {INDEX} i SET embedding = v.embedding::FLOAT[{dims}] "
            "FROM _hati_session_vecs v WHERE i.org_id = v.org_id AND i.agent_id = v.agent_id "
            "AND i.session_id = v.session_id AND i.seq = v.seq"
        )
    finally:
        cur.unregister("_hati_session_vecs")


_NONE = (np.zeros(0, np.int64), np.zeros(0, np.float64))


def _nearest(
    vecs: np.ndarray,
    has_vec: np.ndarray,
    mask: np.ndarray,
    n: int,
    q: np.ndarray,
    k: int,
    coded: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The k rows (of the first n passing `mask`, with a vector) nearest q, best first.
    From APPROX_MIN_ROWS rows on, a sign-code shortlist (max(1000, 40 k) rows) is ranked
    by exact cosine, as memory search does (scores exact, membership approximate)."""
    ok = mask[:n] & has_vec[:n]
    live = int(np.count_nonzero(ok))
    if not live:
        return _NONE
    c = max(1000, 40 * k)
    if coded is not None and POPCOUNT is not None and n >= APPROX_MIN_ROWS and live > c:
        rows = shortlist(coded[0], n, coded[1], q, ok, c)
        sims = dot(vecs[rows], q)
    elif live * 2 < n:  # few pass: gather them first
        rows = np.flatnonzero(ok)
        sims = dot(vecs[rows], q)
    else:
        sims = dot(vecs[:n], q)
        sims[~ok] = -np.inf
        rows = None
    k = min(k, len(sims))
    top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
    top = top[np.lexsort((top, -sims[top]))]
    top = top[np.isfinite(sims[top])]
    return (top if rows is None else rows[top]), sims[top].astype(np.float64)


def _fuse(
    meta: list[tuple | None],
    vecs: np.ndarray,
    has_vec: np.ndarray,
    qvec: np.ndarray | None,
    vec_rows: np.ndarray,
    sims: np.ndarray,
    kw_rows: np.ndarray,
    kw_scores: np.ndarray,
    top_k: int,
) -> list[dict[str, Any]]:
    """The two ranked lists interleaved (`retrieval.fuse`), ties by session and seq."""
    bm25 = dict(zip(kw_rows.tolist(), kw_scores.tolist(), strict=True))
    cos = dict(zip(vec_rows.tolist(), sims.tolist(), strict=True))

    def tie(r: int) -> tuple:
        m = meta[r]
        return (m[0], m[1], r) if m is not None else ("", 0, r)

    out = []
    for p in interleave(vec_rows.tolist(), kw_rows.tolist(), tie):
        r = p.key
        if meta[r] is None:  # deleted while this search ran
            continue
        sid, seq, event_id, author, ts, text = meta[r]  # type: ignore[misc]
        semantic = cos.get(r)
        if semantic is None and qvec is not None and has_vec[r]:
            semantic = float(np.dot(vecs[r], qvec))
        out.append(
            {
                "session_id": sid,
                "seq": seq,
                "event_id": event_id,
                "author": author,
                "timestamp": ts,
                "text": text,
                "score": p.score,
                "semantic": semantic,
                "keyword": bm25.get(r),
            }
        )
        if len(out) == top_k:
            break
    return out
