"""Conversation sessions: the source of truth for what was said (seed 002).

A session (session_id, app_name, user_id, state, created/updated) belongs to the
(org, agent) that created it and holds its ordered events (event_id, invocation_id,
author, branch, message JSON with role and parts, actions JSON, metadata, timestamp).

State is scoped by key prefix: a key without prefix belongs to the session (stored in
its row); `user:` keys are shared by that user's sessions of the app, `app:` keys by
every session of the app (both in `session_scoped_state`); `temp:` keys live only for
the invocation that set them (`session_temp_state`, cleared by `end_invocation` or when
an event of another invocation is appended). An event's `actions.state_delta` object is
applied to the state with the event, in the same transaction.

With `lake_catalog` set the session tables (SHARED: sessions, events, scoped and temp
state, artifacts) live in the agent lake, read through local views of the same names
(proxy/db/agent_lake_views.py), so every proxy reads every session's latest commit. A
session transaction then writes the lake only: it first rewrites the session's row (a
create, or a user:/app: key, the clock row), so two proxies' transactions on one session
conflict at commit and the later runs again (one order, distinct seqs); appends skip the
journal's fast path (acknowledged once in the lake); the search index follows the lake
(lake_feed.py). Rows from before the lake stay local, renamed `<table>_before_lake`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.context import KeyedLocks
from proxy.agent.sessions import artifacts, search
from proxy.agent.sessions.checks import dump, json_object, name
from proxy.agent.sessions.journal import EventKind
from proxy.agent.sessions.lake_feed import IndexFeed
from proxy.agent.sessions.rows import (
    PREFIXES,
    apply_delta,
    bump_clock,
    checked_event,
    delete_counted,
    merged_state,
    scope_of,
    session_events,
    session_row,
    write_event,
)
from proxy.agent.sessions.tables import ARTIFACTS, CLOCK, EVENTS, SCOPED, SESSIONS, SHARED, TEMP
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.relations import agent_relation
from proxy.db.agent_lake import create, lake_table
from proxy.db.agent_lake_views import share, target, unshare
from proxy.db.conflicts import CONFLICT, again_on_conflict_async

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

MAX_PAGE = 1000
RETRIES = 40  # lake commit conflicts with other proxies' writes to a session before giving up

agent_relation(
    "_hatidata_sessions",
    "SELECT agent_id, session_id, app_name, user_id, state, created_at, updated_at "
    f"FROM {SESSIONS} WHERE org_id = $org_id AND agent_id = $agent_id",
    "The caller's conversation sessions",
)
agent_relation(
    "_hatidata_session_events",
    "SELECT agent_id, session_id, seq, event_id, invocation_id, author, branch, message, "
    f"actions, metadata, timestamp FROM {EVENTS} WHERE org_id = $org_id AND agent_id = $agent_id",
    "The events of the caller's sessions, in order (seq)",
)


class Sessions:
    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        self.index = search.EventIndex(layer)
        # One writer per session at a time: event order and state deltas stay serial.
        self._locks = KeyedLocks()
        # append_event's fast path: acknowledged once in the agent journal (journal.py)
        self.journal = EventKind(self, layer.journal, write_event)
        # With a DuckLake catalog the session tables live in the agent lake (SHARED) and
        # this proxy's search index follows them from the lake's snapshots (lake_feed.py).
        self.shared = bool(getattr(layer.config, "lake_catalog", ""))
        self.feed = IndexFeed(layer, self.index) if self.shared else None
        self.conflicts = 0  # session transactions run again after a lake conflict

    def _lock(self, who: Identity, session_id: str) -> asyncio.Lock:
        return self._locks((who.org_id, who.agent_id, session_id))

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        unshare(cur, SHARED)
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {SESSIONS} (
                org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                session_id VARCHAR NOT NULL, app_name VARCHAR NOT NULL,
                user_id VARCHAR NOT NULL, state JSON NOT NULL,
                created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (org_id, agent_id, session_id))"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {EVENTS} (
                org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                session_id VARCHAR NOT NULL, seq BIGINT NOT NULL,
                event_id VARCHAR NOT NULL, invocation_id VARCHAR, author VARCHAR NOT NULL,
                branch VARCHAR, message JSON, actions JSON, metadata JSON,
                timestamp TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (org_id, agent_id, session_id, seq))"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {SCOPED} (
                org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                app_name VARCHAR NOT NULL, user_id VARCHAR NOT NULL,  -- '' for app: keys
                key VARCHAR NOT NULL, value JSON,
                PRIMARY KEY (org_id, agent_id, app_name, user_id, key))"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {TEMP} (
                org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
                session_id VARCHAR NOT NULL, invocation_id VARCHAR NOT NULL,
                key VARCHAR NOT NULL, value JSON,
                PRIMARY KEY (org_id, agent_id, session_id, key))"""
        )
        search.install(cur, self.layer.dims)
        artifacts.install(cur)
        if self.feed is not None:
            share(cur, SHARED)  # rows from before the lake are kept beside, not shared
            create(cur, f"CREATE TABLE IF NOT EXISTS {lake_table(CLOCK)} (n BIGINT NOT NULL)")
            create(
                cur,
                f"INSERT INTO {lake_table(CLOCK)} SELECT 0"
                f" WHERE NOT EXISTS (SELECT 1 FROM {lake_table(CLOCK)})",
            )
            self.feed.install(cur)

    async def start(self) -> None:
        await self.index.start()
        if self.feed is not None:
            await self.feed.start()

    async def stop(self) -> None:
        if self.feed is not None:
            await self.feed.stop()
        await self.index.stop()

    async def transaction(self, who: Identity, session_id: str, work: Any) -> Any:
        """Run `work(cur)` in one agent-database transaction, serial per session, after
        the agent's journaled appends (work may `learn` the session's last seq); in the
        lake, run again from the start after a conflict with another proxy's."""

        key = (who.org_id, who.agent_id, session_id)

        def journaled(cur: duckdb.DuckDBPyConnection) -> tuple[Any, list[tuple]]:
            if self.shared:
                # Two proxies' transactions on one session both rewrite its row: they
                # conflict at commit (40001) and the later runs again on the earlier's
                # events (one order, distinct seqs). A new session has no row yet:
                # creating one bumps the clock row instead (bump_clock).
                cur.execute(
                    f"UPDATE {target(SESSIONS)} SET updated_at = updated_at"
                    " WHERE org_id = ? AND agent_id = ? AND session_id = ?",
                    list(key),
                )
            with search.ram_index.journal() as entries:
                return work(cur), entries

        def counted() -> None:
            self.conflicts += 1

        self.journal.hold(key)  # appends to this session now wait for it
        committed = False
        try:
            await self.layer.journal.settled(who.org_id, who.agent_id)
            async with self._lock(who, session_id):
                out, entries = await again_on_conflict_async(
                    lambda: self.layer.db.transaction(journaled),
                    attempts=RETRIES if self.shared else 1,
                    step=0.02,
                    errors=CONFLICT,
                    on_retry=counted,
                )
            committed = True
        finally:
            self.journal.release(key, committed)
        self.index.committed(entries)  # the search index's RAM mirror follows the commit
        if self.feed is not None:
            self.feed.wake()  # index what this wrote soon, not at the next poll
        return out

    def append_fast(self, who: Identity, session_id: Any, event: dict[str, Any]) -> list | None:
        """append_event through the agent journal (any thread); None: the transaction path."""
        session_id = name("session_id", session_id)
        if self.shared:  # acknowledged only once committed in the lake (kill -9 safe)
            return None
        got = self.journal.try_append(who, session_id, checked_event(event))
        return None if got is None else [got]

    # -- sessions -----------------------------------------------------------------------

    async def create(
        self, who: Identity, app_name: Any, user_id: Any, session_id: Any, state: Any
    ) -> dict[str, Any]:
        app_name, user_id = name("app_name", app_name), name("user_id", user_id)
        session_id = name("session_id", session_id) if session_id else str(uuid.uuid4())
        initial = json_object("state", state)
        now = dt.datetime.now(dt.UTC)

        def work(cur: duckdb.DuckDBPyConnection) -> None:
            bump_clock(cur)  # two proxies creating one session id: one wins
            if session_row(cur, who, session_id, required=False) is not None:
                raise AgentError.conflict(f"session {session_id!r} already exists")
            plain = {k: v for k, v in initial.items() if not k.startswith(PREFIXES)}
            cur.execute(
                f"INSERT INTO {target(SESSIONS)} VALUES (?, ?, ?, ?, ?, ?::JSON, ?, ?)",
                [who.org_id, who.agent_id, session_id, app_name, user_id, dump(plain), now, now],
            )
            session = {"session_id": session_id, "app_name": app_name, "user_id": user_id}
            apply_delta(cur, who, session, None, {k: initial[k] for k in initial if k not in plain})
            self.journal.learn((who.org_id, who.agent_id, session_id), 0, app_name, user_id)

        await self.transaction(who, session_id, work)
        return await self.get(who, session_id)

    def check(self, cur: duckdb.DuckDBPyConnection, who: Identity, session_id: str) -> None:
        """The session exists for this caller (else not_found), inside a transaction."""
        session_row(cur, who, session_id)

    async def get(self, who: Identity, session_id: Any) -> dict[str, Any]:
        session_id = name("session_id", session_id)

        def read(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            s = session_row(cur, who, session_id)
            (count,) = cur.execute(
                f"SELECT count(*) FROM {EVENTS} WHERE org_id = ? AND agent_id = ? "
                "AND session_id = ?",
                [who.org_id, who.agent_id, session_id],
            ).fetchone()
            return {**s, "state": merged_state(cur, who, s), "event_count": count}

        return await self.layer.db.run(read)

    async def list(
        self, who: Identity, app_name: Any, user_id: Any, page_size: Any, after: Any
    ) -> list[dict[str, Any]]:
        if not isinstance(page_size, int) or not 0 < page_size <= MAX_PAGE:
            raise AgentError.invalid(f"page_size must be between 1 and {MAX_PAGE}")
        sql = (
            f"SELECT session_id, app_name, user_id, created_at, updated_at FROM {SESSIONS} "
            "WHERE org_id = ? AND agent_id = ?"
        )
        args: list[Any] = [who.org_id, who.agent_id]
        for col, value in (("app_name", app_name), ("user_id", user_id)):
            if value is not None:
                sql += f" AND {col} = ?"
                args.append(name(col, value))
        if after is not None:  # keyset paging: the last session_id of the previous page
            sql += " AND session_id > ?"
            args.append(name("after", after))
        sql += " ORDER BY session_id LIMIT ?"
        args.append(page_size)

        def read(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
            return cur.execute(sql, args).fetchall()

        cols = ("session_id", "app_name", "user_id", "created_at", "updated_at")
        return [dict(zip(cols, r, strict=True)) for r in await self.layer.db.run(read)]

    async def delete(self, who: Identity, session_id: Any) -> dict[str, Any]:
        session_id = name("session_id", session_id)

        def work(cur: duckdb.DuckDBPyConnection) -> tuple[bool, int]:
            key = [who.org_id, who.agent_id, session_id]
            where = "WHERE org_id = ? AND agent_id = ? AND session_id = ?"
            events = delete_counted(cur, EVENTS, where, key)
            cur.execute(f"DELETE FROM {target(TEMP)} {where}", key)
            cur.execute(f"DELETE FROM {target(ARTIFACTS)} {where}", key)
            search.drop_session(cur, who, session_id)
            gone = delete_counted(cur, SESSIONS, where, key)
            return bool(gone), events

        deleted, events = await self.transaction(who, session_id, work)
        return {"session_id": session_id, "deleted": deleted, "events_deleted": events}

    # -- events -------------------------------------------------------------------------

    async def append(self, who: Identity, session_id: Any, event: dict[str, Any]) -> dict:
        return (await self.append_many(who, session_id, [event]))[0]

    async def append_many(
        self, who: Identity, session_id: Any, events: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Append events in order in ONE transaction (one commit): all or none. Every
        event is checked before anything is written."""
        session_id = name("session_id", session_id)
        now = dt.datetime.now(dt.UTC)
        checked = [checked_event(e) for e in events]

        def work(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            s = session_row(cur, who, session_id)
            key = [who.org_id, who.agent_id, session_id]
            (seq,) = cur.execute(
                f"SELECT coalesce(max(seq), 0) FROM {EVENTS} "
                "WHERE org_id = ? AND agent_id = ? AND session_id = ?",
                key,
            ).fetchone()
            out = []
            for e in checked:
                seq += 1
                out.append(write_event(cur, who, s, key, seq, e, now))
            if out:
                cur.execute(
                    f"UPDATE {target(SESSIONS)} SET updated_at = ? WHERE org_id = ? "
                    "AND agent_id = ? AND session_id = ?",
                    [now, *key],
                )
            assert s is not None
            self.journal.learn(tuple(key), seq, s["app_name"], s["user_id"])
            return out

        out = await self.transaction(who, session_id, work)
        self.index.poke()
        return out

    async def events(
        self, who: Identity, session_id: Any, last_n: Any, after: Any
    ) -> list[dict[str, Any]]:
        session_id = name("session_id", session_id)
        if last_n is not None and (not isinstance(last_n, int) or last_n < 0):
            raise AgentError.invalid("last_n must be a non-negative integer")

        def read(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            session_row(cur, who, session_id)
            return session_events(cur, who, session_id, last_n, after)

        return await self.layer.db.run(read)

    # -- state --------------------------------------------------------------------------

    async def set_state(
        self, who: Identity, session_id: Any, key: Any, value: Any, invocation_id: Any
    ) -> dict[str, Any]:
        session_id, key = name("session_id", session_id), name("key", key)
        if key.startswith("temp:") and not invocation_id:
            raise AgentError.invalid("a temp: key needs the invocation_id it belongs to")
        invocation = name("invocation_id", invocation_id) if invocation_id else None

        def work(cur: duckdb.DuckDBPyConnection) -> None:
            apply_delta(cur, who, session_row(cur, who, session_id), invocation, {key: value})

        await self.transaction(who, session_id, work)
        return {"key": key, "value": value, "scope": scope_of(key)}

    async def end_invocation(
        self, who: Identity, session_id: Any, invocation_id: Any
    ) -> dict[str, Any]:
        session_id = name("session_id", session_id)
        invocation = name("invocation_id", invocation_id)

        def work(cur: duckdb.DuckDBPyConnection) -> int:
            session_row(cur, who, session_id)
            return delete_counted(
                cur,
                TEMP,
                "WHERE org_id = ? AND agent_id = ? AND session_id = ? AND invocation_id = ?",
                [who.org_id, who.agent_id, session_id, invocation],
            )

        cleared = await self.transaction(who, session_id, work)
        return {"session_id": session_id, "invocation_id": invocation, "temp_keys_cleared": cleared}
