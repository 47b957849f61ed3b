"""API keys, organisations and agents shared by every proxy of one DuckLake (issue 25).

With `lake_catalog` set, the agent lake (proxy/db/agent_lake.py) holds a copy of the
local tables of keys.py (`api_keys`, `organizations`, `agents`, derived from their
declarations: no keys) and a one-row `access_clock`. Each proxy keeps reading its local
tables (lookups by digest, the key cache, the CLI with the server stopped all stay as
they are) and:

- publishes: every key write made through AccessControl (create, revoke, rotate, limits,
  rename) is copied to the lake before the call returns, in one lake transaction that
  first bumps the clock row. Two proxies publishing at once so conflict at commit
  (40001) and the loser runs again: keys writes are serialised across proxies, never
  lost. A revocation is sticky: the earliest `revoked_at` of the local row and the lake's
  wins, so a stale copy published later cannot bring a revoked key back.
- catches up: when the agent lake's poller (proxy/db/agent_lake_poll.py, one per
  proxy) saw the lake's snapshot id move, the clock row as of that snapshot; only when the clock moved,
  the rows changed since the last applied snapshot (`ducklake_table_changes`). They are
  upserted into the local tables and the changed keys dropped from the key cache, so a
  key revoked through another proxy stops authenticating here within about a second.
- a secret not found locally is looked up in the lake (by digest): a key created on
  another proxy authenticates here at once, before the next catch-up.

Usage counters and `last_used_at` stay per proxy (docs/deployment.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.access import keys as k
from proxy.core.names import INTERNAL_SCHEMA
from proxy.db.agent_lake import (
    AGENT_LAKE,
    create,
    current_snapshot,
    lake_table,
    lake_transaction,
    mirror_table,
)
from proxy.db.conflicts import again_on_conflict
from proxy.db.lake import lit

if TYPE_CHECKING:
    from proxy.db.agent_lake_poll import LakePoller
    from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.access")

RETRIES = 12  # commit conflicts with other proxies' key writes before giving up
CLOCK = f"{INTERNAL_SCHEMA}.access_clock"  # agent lake only: bumped by every key write
T_FEED = f"{INTERNAL_SCHEMA}.access_lake_feed"  # local: the snapshot and clock applied
# Columns a key's row may change after creation (the others are fixed at creation).
_KEY_SETS = (
    "name",
    "role",
    "scopes",
    "expires_at",
    "rotated_to",
    "allowed_schemas",
    "allowed_tables",
)


class SharedKeys:
    def __init__(
        self, db: PooledDB, changed: Callable[[list[str]], None], lake: LakePoller | None
    ) -> None:
        self.db = db
        self.lake = lake
        self.changed = changed  # key ids changed by other proxies: drop them from caches
        self.key_cols: list[str] = []
        self._snap: int | None = None  # the lake snapshot last looked at (in memory)
        self._pending: set[str] = set()  # key ids whose publishing failed
        self._pending_meta: set[tuple[str, str | None]] = set()  # (org, agent or None)
        self._applying = asyncio.Lock()  # the poller and a key write's catch-up take turns
        self.applied = 0  # key rows taken from other proxies (for logs and tests)

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        self.key_cols = mirror_table(cur, [(k.T_KEYS, ())])
        mirror_table(cur, [(k.T_ORGS, ())])
        mirror_table(cur, [(k.T_AGENTS, ())])
        create(
            cur,
            f"CREATE TABLE IF NOT EXISTS {lake_table(CLOCK)} (n BIGINT NOT NULL,"
            " meta BIGINT NOT NULL)",
        )
        create(
            cur,
            f"INSERT INTO {lake_table(CLOCK)} SELECT 0, 0"
            f" WHERE NOT EXISTS (SELECT 1 FROM {lake_table(CLOCK)})",
        )
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {T_FEED} (snapshot_id BIGINT NOT NULL,"
            " clock BIGINT NOT NULL, meta BIGINT NOT NULL)"
        )

    # ---- publishing ---------------------------------------------------------------

    async def publish(
        self,
        key_ids: list[str],
        orgs: list[str] | None = None,
        agents: list[tuple[str, str]] | None = None,
    ) -> None:
        """Copy these local rows to the lake (retried on commit conflicts). When the lake
        cannot take them (catalog unreachable), the local write stands and the poller
        publishes them again every round until it can."""
        try:
            # another proxy's key write committed first: ours runs again on top of it
            await self.db.run(
                lambda cur: again_on_conflict(
                    lambda: self._publish(cur, key_ids, orgs or [], agents or []),
                    attempts=RETRIES,
                    step=0.03,
                )
            )
        except Exception as exc:
            log.warning(
                "publishing %d API keys to the agent lake failed (retried): %s", len(key_ids), exc
            )
            self._pending.update(key_ids)
            self._pending_meta.update((o, None) for o in orgs or [])
            self._pending_meta.update(agents or [])

    def _publish(
        self,
        cur: duckdb.DuckDBPyConnection,
        key_ids: list[str],
        orgs: list[str],
        agents: list[tuple[str, str]],
    ) -> None:
        lk, lo, la = lake_table(k.T_KEYS), lake_table(k.T_ORGS), lake_table(k.T_AGENTS)
        cols = ", ".join(self.key_cols)
        keys = cur.execute(
            f"SELECT {cols} FROM {k.T_KEYS} WHERE key_id IN (SELECT unnest(?::UUID[]))",
            [key_ids],
        ).to_arrow_table()
        orgs = sorted({*orgs, *keys["org_id"].to_pylist()})
        agents = sorted(
            {*agents}
            | {
                (o, a)
                for o, a in zip(
                    keys["org_id"].to_pylist(), keys["agent_id"].to_pylist(), strict=True
                )
                if a
            }
        )
        cur.register("_hati_keys_pub", keys)
        with lake_transaction(cur, "_hati_keys_pub", "_hati_keys_merged"):
            # n: any key write; meta: organisations or agents too (read only then)
            meta = 1 if orgs or agents else 0
            cur.execute(f"UPDATE {lake_table(CLOCK)} SET n = n + 1, meta = meta + ?", [meta])
            # A revocation anywhere stays: the earliest revoked_at of ours and the lake's.
            # Arrow gives UUIDs as text: compared with the lake's after a cast.
            ids = "(SELECT key_id::UUID FROM _hati_keys_pub)"
            merged = cur.execute(
                f"SELECT p.* REPLACE (least(p.revoked_at, s.revoked_at) AS revoked_at,"
                f" greatest(p.last_used_at, s.last_used_at) AS last_used_at)"
                f" FROM _hati_keys_pub p LEFT JOIN (SELECT key_id, min(revoked_at) AS revoked_at,"
                f" max(last_used_at) AS last_used_at FROM {lk} WHERE key_id IN {ids}"
                f" GROUP BY key_id) s ON s.key_id = p.key_id::UUID"
            ).to_arrow_table()
            cur.register("_hati_keys_merged", merged)
            cur.execute(f"DELETE FROM {lk} WHERE key_id IN {ids}")
            cur.execute(f"INSERT INTO {lk} ({cols}) SELECT {cols} FROM _hati_keys_merged")
            if orgs:
                cur.execute(
                    f"DELETE FROM {lo} WHERE org_id IN (SELECT unnest(?::VARCHAR[]))", [orgs]
                )
                cur.execute(
                    f"INSERT INTO {lo} SELECT * FROM {k.T_ORGS}"
                    " WHERE org_id IN (SELECT unnest(?::VARCHAR[]))",
                    [orgs],
                )
            if agents:
                pairs = [f"{o}\x00{a}" for o, a in agents]
                match = "org_id || chr(0) || agent_id IN (SELECT unnest(?::VARCHAR[]))"
                cur.execute(f"DELETE FROM {la} WHERE {match}", [pairs])
                cur.execute(f"INSERT INTO {la} SELECT * FROM {k.T_AGENTS} WHERE {match}", [pairs])

    # ---- reading ------------------------------------------------------------------

    async def lookup(self, secret: str) -> k.ApiKey | None:
        """A key another proxy created and this one has not applied yet (by digest)."""
        if not k.looks_like_key(secret) or len(secret) > 128:
            return None
        wanted = k.digest(secret)

        def read(cur: duckdb.DuckDBPyConnection) -> k.ApiKey | None:
            row = cur.execute(
                f"SELECT {k.KEY_COLUMNS} FROM {lake_table(k.T_KEYS)} WHERE key_hash = ?"
                " ORDER BY revoked_at NULLS LAST LIMIT 1",
                [wanted],
            ).fetchone()
            return None if row is None else k.row_to_key(row)

        return await self.db.read(read)

    # ---- catching up --------------------------------------------------------------

    def _apply(self, cur: duckdb.DuckDBPyConnection) -> list[str]:
        """Apply other proxies' key writes since the last applied snapshot; the ids of
        the keys changed (ours come back too: applying them again changes nothing)."""
        snap = current_snapshot(cur)
        if self._snap is not None and snap <= self._snap:
            return []
        row = cur.execute(f"SELECT snapshot_id, clock, meta FROM {T_FEED}").fetchone()
        last, seen, seen_meta = row if row else (None, None, None)
        at = f"AT (VERSION => {snap})"
        clock, meta = cur.execute(
            f"SELECT max(n), max(meta) FROM {lake_table(CLOCK)} {at}"
        ).fetchone()
        if last is not None and clock == seen:  # the snapshot moved for something else
            self._snap = snap
            return []
        tables = {"keys": k.T_KEYS}
        if last is None or meta != seen_meta:
            tables.update(orgs=k.T_ORGS, agents=k.T_AGENTS)
        feeds: dict[str, Any] = {}
        for name, local in tables.items():
            if last is None:  # first catch-up: the tables as of one snapshot
                src = f"SELECT *, {snap} AS _snap FROM {lake_table(local)} {at}"
            else:
                schema, table = local.split(".")
                src = (
                    "SELECT * EXCLUDE (snapshot_id, rowid, change_type), snapshot_id AS _snap"
                    f" FROM ducklake_table_changes({lit(AGENT_LAKE)}, {lit(schema)},"
                    f" {lit(table)}, {int(last) + 1}, {snap})"
                    " WHERE change_type IN ('insert', 'update_postimage')"
                )
            feeds[name] = cur.execute(src).to_arrow_table()
        ids = sorted(set(feeds["keys"]["key_id"].to_pylist()))
        for name, feed in feeds.items():
            cur.register(f"_hati_access_{name}", feed)
        with lake_transaction(cur, *(f"_hati_access_{name}" for name in feeds)):
            self._upsert(cur, set(feeds))
            cur.execute(f"DELETE FROM {T_FEED}")
            cur.execute(f"INSERT INTO {T_FEED} VALUES (?, ?, ?)", [snap, clock or 0, meta or 0])
        self._snap = snap
        return [str(i) for i in ids]

    @staticmethod
    def _upsert(cur: duckdb.DuckDBPyConnection, fed: set[str]) -> None:
        """The fed rows into the local tables: the latest row of each id (a revocation
        stays)."""

        def latest(feed: str, ids: str) -> str:
            return (
                f"SELECT * EXCLUDE (_snap) FROM (SELECT DISTINCT ON ({ids}) * FROM {feed}"
                f" ORDER BY {ids}, _snap DESC)"
            )

        if fed >= {"orgs", "agents"}:
            cur.execute(
                f"INSERT INTO {k.T_ORGS} BY NAME {latest('_hati_access_orgs', 'org_id')}"
                " ON CONFLICT (org_id) DO UPDATE SET name = EXCLUDED.name"
            )
            cur.execute(
                f"INSERT INTO {k.T_AGENTS} BY NAME"
                f" {latest('_hati_access_agents', 'org_id, agent_id')}"
                " ON CONFLICT (org_id, agent_id) DO UPDATE SET framework = EXCLUDED.framework,"
                " description = EXCLUDED.description"
            )
        sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in _KEY_SETS)
        t = k.T_KEYS
        cur.execute(
            f"INSERT INTO {t} BY NAME {latest('_hati_access_keys', 'key_id')}"
            f" ON CONFLICT (key_id) DO UPDATE SET {sets},"
            f" revoked_at = least({t}.revoked_at, EXCLUDED.revoked_at),"
            f" last_used_at = greatest({t}.last_used_at, EXCLUDED.last_used_at)"
        )

    async def catch_up(self) -> list[str]:
        async with self._applying:
            ids = await self.db.run(self._apply)
        if ids:
            self.applied += len(ids)
            self.changed(ids)
            log.debug("agent lake: %d API keys changed", len(ids))
        return ids

    async def _round(self) -> None:
        if self._pending or self._pending_meta:
            ids, meta = sorted(self._pending), sorted(self._pending_meta, key=str)
            self._pending, self._pending_meta = set(), set()
            orgs = [o for o, a in meta if a is None]
            await self.publish(ids, orgs, [(o, a) for o, a in meta if a is not None])
        await self.catch_up()

    # ---- lifecycle ----------------------------------------------------------------

    def _unpublished(self, cur: duckdb.DuckDBPyConnection) -> list[str]:
        """Local keys the lake lacks or holds unrevoked while revoked here (written with
        the server stopped, or before the lake was enabled)."""
        return [
            r[0]
            for r in cur.execute(
                f"SELECT key_id::VARCHAR FROM {k.T_KEYS} l WHERE NOT EXISTS (SELECT 1 FROM"
                f" {lake_table(k.T_KEYS)} s WHERE s.key_id = l.key_id AND (l.revoked_at IS NULL"
                " OR s.revoked_at IS NOT NULL))"
            ).fetchall()
        ]

    async def start(self) -> None:
        await self.catch_up()
        left = await self.db.run(self._unpublished)
        if left:
            await self.publish(left)
        log.info("agent lake: API keys shared (%d published from this proxy)", len(left))
        if self.lake is not None:  # the key writes that failed to publish: every tick
            self.lake.subscribe("API keys", self._round, due=self._has_pending, tables=[CLOCK])

    def _has_pending(self) -> bool:
        return bool(self._pending or self._pending_meta)

    async def stop(self) -> None:
        pass  # the poller stops with the layer; each key write is published before it returns
