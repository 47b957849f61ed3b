"""Search over past conversations: an index derived from session events.

`session_index` holds, per event, its text (lower-cased for keyword matching) and its
vector (NULL until the embedding pump fills it). The sessions are the source of truth:
`rebuild` drops a scope's index rows and derives them again from the events, so a
corrupt index, a model change or a format change is repaired by one call.

A search draws candidates from both sides and fuses them, so an exact keyword hit is
never lost to a cosine cut-off: the vector side's top POOL by cosine similarity, the
keyword side's top POOL by the share of the query's idf weight whose terms the event
contains, fused by reciprocal rank (score = sum of 1 / (RRF_K + rank) over the sides
that found it). `mode` 'vector' or 'keyword' uses one side.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from proxy.agent.sessions.tables import EVENTS, INDEX, SESSIONS
from proxy.agent.sessions.window import event_text
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.sessions")

MODES = ("hybrid", "vector", "keyword")
KEYWORD_WEIGHT = 0.5  # score = semantic + KEYWORD_WEIGHT * keyword
POOL = 50
BATCH = 32
MAX_TOP_K = 100
_WORD = re.compile(r"\w{2,}", re.UNICODE)
# Words too common to say what a question is about (the keyword side ignores them).
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


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


def index_event(
    cur: duckdb.DuckDBPyConnection, who: Identity, session: dict[str, Any], event: dict
) -> None:
    """Add one event's row (no vector yet), in the append's transaction."""
    text = event_text(event)
    cur.execute(
        f"INSERT OR REPLACE INTO {INDEX} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        [
            who.org_id,
            who.agent_id,
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
    cur.execute(
        f"DELETE FROM {INDEX} WHERE org_id = ? AND agent_id = ? AND session_id = ? AND seq = ?",
        [who.org_id, who.agent_id, session_id, seq],
    )


def drop_session(cur: duckdb.DuckDBPyConnection, who: Identity, session_id: str) -> None:
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
        return len(rows)

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
        scope = "org_id = ? AND agent_id = ?"
        args: list[Any] = [who.org_id, who.agent_id]
        for col, value in (("app_name", app_name), ("user_id", user_id)):
            if value is not None:
                scope += f" AND {col} = ?"
                args.append(value)
        qvec = None
        if mode != "keyword":
            if self.layer.semantic.worker is None:
                raise AgentError.unavailable("vector search needs an embedding model")
            qvec = np.asarray(await self.layer.semantic.worker.embed_now([query], "query"))[0]
        words = set(_WORD.findall(query.lower())) - STOPWORDS
        terms = sorted(words) if mode != "vector" else []
        pool = max(POOL, top_k * 5)
        dims = self.layer.dims

        def run(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            keys: set[tuple[str, int]] = set()
            if qvec is not None:
                keys.update(
                    (sid, seq)
                    for sid, seq in cur.execute(
                        f"SELECT session_id, seq FROM {INDEX} WHERE {scope} AND embedding IS "
                        f"NOT NULL ORDER BY array_cosine_similarity(embedding, ?::FLOAT[{dims}]) "
                        "DESC, session_id, seq LIMIT ?",
                        [*args, qvec.tolist(), pool],
                    ).fetchall()
                )
            idf: list[float] = []
            if terms:
                found, idf = _keyword(cur, scope, args, terms, pool)
                keys.update(found)
            if not keys:
                return []
            # Both parts, exactly, for every candidate either side drew.
            sem = (
                f"array_cosine_similarity(embedding, ?::FLOAT[{dims}])"
                if qvec is not None
                else "NULL"
            )
            rows = cur.execute(
                f"SELECT session_id, seq, event_id, author, timestamp, text, lower_text, {sem} "
                f"FROM {INDEX} WHERE {scope} AND concat(session_id, chr(0), seq) IN "
                "(SELECT unnest(?::VARCHAR[]))",
                ([qvec.tolist()] if qvec is not None else [])
                + [*args, [f"{s}\x00{q}" for s, q in keys]],
            ).fetchall()
            weight = sum(idf) or 1.0
            out = []
            for sid, seq, event_id, author, ts, text, lower, semantic in rows:
                keyword = (
                    sum(w for t, w in zip(terms, idf, strict=True) if t in lower) / weight
                    if terms
                    else None
                )
                out.append(
                    {
                        "session_id": sid,
                        "seq": seq,
                        "event_id": event_id,
                        "author": author,
                        "timestamp": ts,
                        "text": text,
                        "score": (semantic or 0.0) + KEYWORD_WEIGHT * (keyword or 0.0),
                        "semantic": semantic,
                        "keyword": keyword,
                    }
                )
            out.sort(key=lambda r: (-r["score"], r["session_id"], r["seq"]))
            return out[:top_k]

        return await self.layer.db.run(run)

    async def rebuild(
        self, who: Identity, app_name: str | None, user_id: str | None
    ) -> dict[str, Any]:
        """Derive the scope's index rows from the sessions again, vectors included."""
        scope = "s.org_id = ? AND s.agent_id = ?"
        args: list[Any] = [who.org_id, who.agent_id]
        for col, value in (("app_name", app_name), ("user_id", user_id)):
            if value is not None:
                scope += f" AND s.{col} = ?"
                args.append(value)

        def derive(cur: duckdb.DuckDBPyConnection) -> int:
            cur.execute(
                f"DELETE FROM {INDEX} i USING {SESSIONS} s WHERE i.org_id = s.org_id AND "
                f"i.agent_id = s.agent_id AND i.session_id = s.session_id AND {scope}",
                args,
            )
            rows = cur.execute(
                f"SELECT s.session_id, s.app_name, s.user_id, e.seq, e.event_id, e.author, "
                f"e.timestamp, e.message, e.actions FROM {EVENTS} e JOIN {SESSIONS} s "
                "ON e.org_id = s.org_id AND e.agent_id = s.agent_id "
                f"AND e.session_id = s.session_id WHERE {scope}",
                args,
            ).fetchall()
            for sid, app, user, seq, eid, author, ts, msg, actions in rows:
                event = {"seq": seq, "event_id": eid, "author": author, "timestamp": ts}
                event["message"] = json.loads(msg) if msg is not None else None
                event["actions"] = json.loads(actions) if actions is not None else None
                session = {"session_id": sid, "app_name": app, "user_id": user}
                index_event(cur, who, session, event)
            return len(rows)

        count = await self.layer.db.transaction(derive)
        log.info("session index rebuild: %d events of %s/%s", count, who.org_id, who.agent_id)
        done = 0
        if self.layer.semantic.worker is not None:
            while n := await self.embed_pending(BATCH * 8, who):
                done += n
                log.info("session index rebuild: embedded %d vectors (%d events)", done, count)

        def embedded(cur: duckdb.DuckDBPyConnection) -> int:
            return cur.execute(
                f"SELECT count(i.embedding) FROM {INDEX} i JOIN {SESSIONS} s ON "
                "i.org_id = s.org_id AND i.agent_id = s.agent_id AND i.session_id = s.session_id "
                f"WHERE {scope}",
                args,
            ).fetchone()[0]

        return {"events_indexed": count, "events_embedded": await self.layer.db.run(embedded)}


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


def _keyword(
    cur: duckdb.DuckDBPyConnection, scope: str, args: list[Any], terms: list[str], pool: int
) -> tuple[list[tuple[str, int]], list[float]]:
    """The `pool` events richest in the query's rare terms (idf weight matched), and each
    term's idf over the events in scope."""
    has = [f"contains(lower_text, ${i + 1})" for i in range(len(terms))]
    counts = cur.execute(
        f"SELECT count(*), {', '.join(f'count(*) FILTER (WHERE {h})' for h in has)} "
        f"FROM {INDEX} WHERE {_numbered(scope, len(terms))}",
        [*terms, *args],
    ).fetchone()
    total, dfs = counts[0], counts[1:]
    idf = [math.log(1 + (total - df + 0.5) / (df + 0.5)) for df in dfs]
    score = " + ".join(f"({h})::INT * {w!r}" for h, w in zip(has, idf, strict=True))
    rows = cur.execute(
        f"SELECT session_id, seq FROM {INDEX} WHERE {_numbered(scope, len(terms))} "
        f"AND ({' OR '.join(has)}) ORDER BY {score} DESC, session_id, seq LIMIT {int(pool)}",
        [*terms, *args],
    ).fetchall()
    return [(sid, seq) for sid, seq in rows], idf


def _numbered(scope: str, after: int) -> str:
    """`scope`'s ? placeholders as $n, numbered after the terms' $1..$after."""
    parts = scope.split("?")
    out = parts[0]
    for i, part in enumerate(parts[1:], after + 1):
        out += f"${i}" + part
    return out
