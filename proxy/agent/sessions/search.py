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
RRF_K = 60
POOL = 50
BATCH = 32
MAX_TOP_K = 100
_WORD = re.compile(r"\w{2,}", re.UNICODE)


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

        rows = await self.layer.db.run(pending)
        if not rows:
            return 0
        vecs = await self.layer.semantic.worker.submit([r[4] or " " for r in rows], "passage")
        vecs = np.asarray(vecs, dtype=np.float32)
        dims = self.layer.dims

        def store(cur: duckdb.DuckDBPyConnection) -> None:
            for (org, agent, sid, seq, _), vec in zip(rows, vecs, strict=True):
                cur.execute(
                    f"UPDATE {INDEX} SET embedding = ?::FLOAT[{dims}] WHERE org_id = ? "
                    "AND agent_id = ? AND session_id = ? AND seq = ?",
                    [vec.tolist(), org, agent, sid, seq],
                )

        await self.layer.db.run(store)
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
        terms = sorted(set(_WORD.findall(query.lower()))) if mode != "vector" else []
        pool = max(POOL, top_k * 5)
        dims = self.layer.dims

        def run(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            ranked: dict[tuple[str, int], dict[str, float]] = {}
            if qvec is not None:
                rows = cur.execute(
                    f"SELECT session_id, seq, array_cosine_similarity(embedding, "
                    f"?::FLOAT[{dims}]) AS s FROM {INDEX} WHERE {scope} AND embedding "
                    "IS NOT NULL ORDER BY s DESC, session_id, seq LIMIT ?",
                    [qvec.tolist(), *args, pool],
                ).fetchall()
                for rank, (sid, seq, s) in enumerate(rows, 1):
                    ranked[(sid, seq)] = {"semantic": float(s), "rv": rank}
            if terms:
                for rank, (sid, seq, s) in enumerate(_keyword(cur, scope, args, terms, pool), 1):
                    ranked.setdefault((sid, seq), {}).update({"keyword": s, "rk": rank})
            scored = sorted(
                ranked.items(),
                key=lambda kv: (-_fused(kv[1]), kv[0]),
            )[:top_k]
            if not scored:
                return []
            keys = [list(k) for k, _ in scored]
            info = {
                (r[0], r[1]): r[2:]
                for r in cur.execute(
                    f"SELECT session_id, seq, event_id, author, timestamp, text FROM {INDEX} "
                    f"WHERE {scope} AND concat(session_id, chr(0), seq) IN "
                    "(SELECT unnest(?::VARCHAR[]))",
                    [*args, [f"{s}\x00{q}" for s, q in keys]],
                ).fetchall()
            }
            out = []
            for (sid, seq), parts in scored:
                event_id, author, ts, text = info[(sid, seq)]
                out.append(
                    {
                        "session_id": sid,
                        "seq": seq,
                        "event_id": event_id,
                        "author": author,
                        "timestamp": ts,
                        "text": text,
                        "score": _fused(parts),
                        "semantic": parts.get("semantic"),
                        "keyword": parts.get("keyword"),
                    }
                )
            return out

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
            cur.begin()
            try:
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
                cur.commit()
                return len(rows)
            except BaseException:
                cur.rollback()
                raise

        count = await self.layer.db.run(derive)
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


def _fused(parts: dict[str, float]) -> float:
    return sum(1.0 / (RRF_K + parts[r]) for r in ("rv", "rk") if r in parts)


def _keyword(
    cur: duckdb.DuckDBPyConnection, scope: str, args: list[Any], terms: list[str], pool: int
) -> list[tuple[str, int, float]]:
    """The events richest in the query's rare terms: idf weight matched / idf weight asked."""
    has = [f"contains(lower_text, ${i + 1})" for i in range(len(terms))]
    counts = cur.execute(
        f"SELECT count(*), {', '.join(f'count(*) FILTER (WHERE {h})' for h in has)} "
        f"FROM {INDEX} WHERE {_numbered(scope, len(terms))}",
        [*terms, *args],
    ).fetchone()
    total, dfs = counts[0], counts[1:]
    idf = [math.log(1 + (total - df + 0.5) / (df + 0.5)) for df in dfs]
    weight = sum(idf) or 1.0
    score = " + ".join(f"({h})::INT * {w!r}" for h, w in zip(has, idf, strict=True))
    rows = cur.execute(
        f"SELECT session_id, seq, ({score}) / {weight!r} AS s FROM {INDEX} "
        f"WHERE {_numbered(scope, len(terms))} AND ({' OR '.join(has)}) "
        f"ORDER BY s DESC, session_id, seq LIMIT {int(pool)}",
        [*terms, *args],
    ).fetchall()
    return [(sid, seq, float(s)) for sid, seq, s in rows]


def _numbered(scope: str, after: int) -> str:
    """`scope`'s ? placeholders as $n, numbered after the terms' $1..$after."""
    parts = scope.split("?")
    out = parts[0]
    for i, part in enumerate(parts[1:], after + 1):
        out += f"${i}" + part
    return out
