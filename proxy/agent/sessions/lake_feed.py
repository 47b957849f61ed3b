"""The session search index of a proxy of a DuckLake: it follows the agent lake.

With `lake_catalog` set the session tables live in the agent lake (service.py: SHARED)
and a session transaction writes only there (a transaction writes one database), so no
proxy's index is written with the events, its own either. This feed derives it: when the
agent lake's poller (proxy/db/agent_lake_poll.py) saw a snapshot that changed the
events, or right after a session transaction of this proxy (`wake`), it reads the events
changed since the snapshot it last indexed (`ducklake_table_changes`; the first time,
every event as of one snapshot), and in one local transaction adds the inserted ones to
the index (two statements for all of them: `search.index_rows`), drops the deleted ones
(a deleted session, a compaction, a repair) and stores the snapshot (so exactly once,
across restarts and kill -9). The RAM mirror follows the commit and the embedding pump
fills the new rows' vectors.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.sessions import ram_index, search
from proxy.agent.sessions.tables import EVENTS, FEED, INDEX, SESSIONS
from proxy.db.agent_lake import changes_since, current_snapshot, lake_table, lake_transaction

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.sessions")

MAX_CACHED = 100_000  # sessions whose app and user are kept
_COLS = "org_id, agent_id, session_id, seq, event_id, author, timestamp, message, actions"


class IndexFeed:
    def __init__(self, layer: AgentContext, index: search.EventIndex) -> None:
        self.layer = layer
        self.index = index
        self._applying = asyncio.Lock()  # the poller and a wake take turns
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self.indexed = 0  # events indexed from the lake (for logs and tests)
        self.rounds = 0  # change-feed reads (incremental: one per snapshot move)
        # A session's app and user (fixed at its creation), read from the lake once and
        # forgotten when its events are deleted (a deleted session). Left alone: a session
        # deleted with no events and created again under its id with another app or user
        # is indexed under the old ones until `rebuild_session_index` or a restart.
        self._sessions: dict[tuple[str, str, str], dict[str, Any]] = {}

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(f"CREATE TABLE IF NOT EXISTS {FEED} (snapshot_id BIGINT NOT NULL)")

    async def start(self) -> None:
        try:
            await self.catch_up()
        except Exception as exc:  # search lags until the poller's next round; appends work
            log.warning("indexing session events from the agent lake failed: %s", exc)
        if self.layer.lake is not None:
            self.layer.lake.subscribe("session search index", self.catch_up, tables=[EVENTS])

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def wake(self) -> None:
        """Catch up soon (a session transaction of this proxy committed)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._soon())
        else:
            self._again = True

    async def _soon(self) -> None:
        while True:
            self._again = False
            try:
                await self.catch_up()
            except Exception as exc:  # the poller's next tick tries again
                log.warning("indexing session events from the agent lake failed: %s", exc)
                return
            if not self._again:
                return

    async def catch_up(self) -> int:
        async with self._applying:
            entries = await self.layer.db.run(self._apply)
        if entries:
            self.index.committed(entries)
            self.index.poke()  # their vectors
        return len(entries)

    def _apply(self, cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        snap = current_snapshot(cur)
        (last,) = cur.execute(f"SELECT max(snapshot_id) FROM {FEED}").fetchone()
        if last is not None and snap <= last:
            return []
        self.rounds += 1
        started = time.monotonic()
        src = changes_since(EVENTS, _COLS, last, snap)
        rows = cur.execute(
            f"SELECT * FROM ({src}) WHERE change_type IN ('insert', 'delete')"
            " ORDER BY snapshot_id, change_type = 'insert'"  # a snapshot's deletes first
        ).fetchall()
        read = time.monotonic()
        final: dict[tuple, tuple] = {}  # an event's last change in the range wins
        for kind, _, *row in rows:
            final[tuple(row[:4])] = (kind, row)
            if kind == "delete":  # a deleted session's id may come back as another's
                self._sessions.pop(tuple(row[:3]), None)
        if len(self._sessions) > MAX_CACHED:
            self._sessions.clear()
        sessions = self._sessions
        wanted = {k[:3] for k, (kind, _) in final.items() if kind == "insert"} - set(sessions)
        if wanted:
            for org, agent, sid, app, user in cur.execute(
                f"SELECT org_id, agent_id, session_id, app_name, user_id"
                f" FROM {lake_table(SESSIONS)} AT (VERSION => {snap})"
                " WHERE session_id IN (SELECT unnest(?::VARCHAR[]))",
                [sorted({k[2] for k in wanted})],
            ).fetchall():
                if (org, agent, sid) in wanted:  # one session id may be several agents'
                    sessions[(org, agent, sid)] = {
                        "session_id": sid,
                        "app_name": app,
                        "user_id": user,
                    }
        with ram_index.journal() as entries, lake_transaction(cur):
            if last is None:  # whatever an earlier run indexed is derived again
                cur.execute(f"DELETE FROM {INDEX}")
            added = []
            for (org, agent, sid, seq), (kind, row) in final.items():
                if kind == "delete":
                    search.drop_row(cur, org, agent, sid, seq)
                    continue
                session = sessions.get((org, agent, sid))
                if session is None:  # deleted by the snapshot read: its events go too
                    continue
                event_id, author, ts, message, actions = row[4:]
                event = {"seq": seq, "event_id": event_id, "author": author, "timestamp": ts}
                event["message"] = None if message is None else json.loads(message)
                event["actions"] = None if actions is None else json.loads(actions)
                added.append((org, agent, session, event))
            search.index_rows(cur, added, fresh=last is None)
            self.indexed += len(added)
            cur.execute(f"DELETE FROM {FEED}")
            cur.execute(f"INSERT INTO {FEED} VALUES (?)", [snap])
        log.debug(
            "session index: snapshot %d, %d changes read in %.0f ms, indexed in %.0f ms",
            snap,
            len(rows),
            (read - started) * 1000,
            (time.monotonic() - read) * 1000,
        )
        return entries
