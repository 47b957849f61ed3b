"""Rebuilding a scope's session search index from the events (search.EventIndex.rebuild).

Why a staging table: the first version inserted the scope's rows without vectors and
then UPDATEd each embedded chunk into `session_index`. A DuckDB UPDATE of a list column
is a delete plus an insert, its join reads the whole table, and the WAL it writes makes
checkpoints rewrite the table: each chunk cost grew with the table (measured on a file
database, 512-row chunks: 0.04 s at 3k rows, 0.4 s at 10k, 1.7 s at 30k), so the rebuild
was 0.9x the raw model at 3k events and 0.33x at 10k. Now the texts are read once, each
embedded chunk is appended (rows and vectors together) to `session_index_rebuild`, which
only grows, and one transaction at the end swaps the staged rows in: the rows of the
same events are replaced, rows whose event is gone are dropped. Every step is linear.

Meanwhile searches keep using the old rows (nothing disappears during a long rebuild);
an event appended during the rebuild is indexed as usual (it is not staged, so the swap
leaves its row alone); an event deleted meanwhile is not brought back (the swap inserts
only staged rows whose event still exists with the same event id).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from proxy.agent.sessions.tables import EVENTS, INDEX, REBUILD, SESSIONS
from proxy.agent.sessions.window import event_text
from proxy.core.identity import Identity

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.sessions")

CHUNK = 512  # texts per model call: progress granularity, one append each

_COLS = "session_id, seq, event_id, app_name, user_id, author, timestamp, text"


def install(cur: duckdb.DuckDBPyConnection, dims: int) -> None:
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {REBUILD} (
            org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
            session_id VARCHAR NOT NULL, seq BIGINT NOT NULL,
            event_id VARCHAR NOT NULL, app_name VARCHAR NOT NULL, user_id VARCHAR NOT NULL,
            author VARCHAR NOT NULL, timestamp TIMESTAMPTZ NOT NULL,
            text VARCHAR NOT NULL, embedding FLOAT[{dims}])"""
    )


def scope_sql(who: Identity, app_name: str | None, user_id: str | None) -> tuple[str, list]:
    """The WHERE of a scope over the sessions table aliased `s`, and its arguments."""
    scope = "s.org_id = ? AND s.agent_id = ?"
    args: list[Any] = [who.org_id, who.agent_id]
    for col, value in (("app_name", app_name), ("user_id", user_id)):
        if value is not None:
            scope += f" AND s.{col} = ?"
            args.append(value)
    return scope, args


def _derive(cur: duckdb.DuckDBPyConnection, scope: str, args: list) -> list[tuple]:
    """(session, seq, event id, app, user, author, timestamp, text) of the scope's events."""
    rows = cur.execute(
        "SELECT s.session_id, e.seq, e.event_id, s.app_name, s.user_id, e.author, "
        f"e.timestamp, e.message, e.actions FROM {EVENTS} e JOIN {SESSIONS} s "
        "ON e.org_id = s.org_id AND e.agent_id = s.agent_id AND e.session_id = s.session_id "
        f"WHERE {scope}",
        args,
    ).fetchall()
    out = []
    for sid, seq, eid, app, user, author, ts, msg, actions in rows:
        event = {"message": json.loads(msg) if msg is not None else None}
        event["actions"] = json.loads(actions) if actions is not None else None
        out.append((sid, seq, eid, app, user, author, ts, event_text(event)))
    return out


def _clear(cur: duckdb.DuckDBPyConnection, who: Identity) -> None:
    cur.execute(
        f"DELETE FROM {REBUILD} WHERE org_id = ? AND agent_id = ?", [who.org_id, who.agent_id]
    )


def _stage(
    cur: duckdb.DuckDBPyConnection,
    who: Identity,
    rows: list[tuple],
    vecs: np.ndarray | None,
    dims: int,
) -> None:
    """Append rows (and their vectors, or NULL) to the staging table: one INSERT."""
    import pyarrow as pa

    names = _COLS.split(", ")
    cols: dict[str, Any] = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    cols["seq"] = pa.array(cols["seq"], pa.int64())
    if vecs is None:
        cols["embedding"] = pa.nulls(len(rows), pa.list_(pa.float32(), dims))
    else:
        flat = pa.array(np.ascontiguousarray(vecs, dtype=np.float32).ravel())
        cols["embedding"] = pa.FixedSizeListArray.from_arrays(flat, dims)
    cur.register("_hati_rebuild_rows", pa.table(cols))
    try:
        cur.execute(
            f"INSERT INTO {REBUILD} SELECT ?, ?, {_COLS}, embedding::FLOAT[{dims}] "
            "FROM _hati_rebuild_rows",
            [who.org_id, who.agent_id],
        )
    finally:
        cur.unregister("_hati_rebuild_rows")


def _swap(cur: duckdb.DuckDBPyConnection, who: Identity, scope: str, args: list) -> None:
    """In one transaction: staged rows whose event still exists replace the index rows of
    the same events; index rows of the scope whose event is gone are dropped."""
    me = [who.org_id, who.agent_id]
    fresh = (
        f"SELECT st.* FROM {REBUILD} st JOIN {EVENTS} e ON e.org_id = st.org_id "
        "AND e.agent_id = st.agent_id AND e.session_id = st.session_id AND e.seq = st.seq "
        "AND e.event_id = st.event_id WHERE st.org_id = ? AND st.agent_id = ?"
    )
    cur.execute(
        f"DELETE FROM {INDEX} i USING ({fresh}) f WHERE i.org_id = f.org_id "
        "AND i.agent_id = f.agent_id AND i.session_id = f.session_id AND i.seq = f.seq",
        me,
    )
    cur.execute(
        f"DELETE FROM {INDEX} i USING {SESSIONS} s WHERE i.org_id = s.org_id "
        f"AND i.agent_id = s.agent_id AND i.session_id = s.session_id AND {scope} "
        f"AND NOT EXISTS (SELECT 1 FROM {EVENTS} e WHERE e.org_id = i.org_id "
        "AND e.agent_id = i.agent_id AND e.session_id = i.session_id AND e.seq = i.seq)",
        args,
    )
    cur.execute(
        f"INSERT INTO {INDEX} SELECT org_id, agent_id, {_COLS}, lower(text), embedding "
        f"FROM ({fresh})",
        me,
    )
    _clear(cur, who)


async def rebuild(
    layer: AgentContext,
    who: Identity,
    app_name: str | None,
    user_id: str | None,
    progress: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """Derive, embed, stage and swap in the scope's index rows (the caller holds the
    index's fill lock: no pump writes vectors meanwhile)."""
    scope, args = scope_sql(who, app_name, user_id)
    db, dims, worker = layer.db, layer.dims, layer.semantic.worker
    rows = await db.read(lambda cur: _derive(cur, scope, args))
    await db.run(lambda cur: _clear(cur, who))
    log.info("session index rebuild: %d events of %s/%s", len(rows), who.org_id, who.agent_id)
    if worker is None or not rows:
        await db.run(lambda cur: _stage(cur, who, rows, None, dims) if rows else None)
    else:
        rows.sort(key=lambda r: len(r[7]))  # similar lengths: less padding per batch
        staging: asyncio.Future | None = None
        try:
            for start in range(0, len(rows), CHUNK):
                chunk = rows[start : start + CHUNK]
                # At normal priority (embed_now), not on the niced background thread: a
                # rebuild is work someone asked for and waits on; on a busy machine the
                # background thread got a third of the model's rate (measured 0.35x).
                vecs = np.asarray(await worker.embed_now([r[7] or " " for r in chunk], "passage"))
                if staging is not None:
                    await staging  # the last chunk's append ran while this one embedded
                staging = asyncio.ensure_future(
                    db.run(lambda cur, c=chunk, v=vecs: _stage(cur, who, c, v, dims))
                )
                done = start + len(chunk)
                log.info("session index rebuild: embedded %d of %d", done, len(rows))
                if progress is not None:
                    progress(done, len(rows))
        finally:
            if staging is not None:
                await staging
    await db.transaction(lambda cur: _swap(cur, who, scope, args))

    def counts(cur: duckdb.DuckDBPyConnection) -> tuple[int, int]:
        return cur.execute(
            f"SELECT count(*), count(i.embedding) FROM {INDEX} i JOIN {SESSIONS} s ON "
            "i.org_id = s.org_id AND i.agent_id = s.agent_id AND i.session_id = s.session_id "
            f"WHERE {scope}",
            args,
        ).fetchone()

    indexed, embedded = await db.run(counts)
    return {"events_indexed": indexed, "events_embedded": embedded}
