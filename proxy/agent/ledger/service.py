"""The chain-of-thought ledger: append-only, hash-chained reasoning steps per session.

Tables (in `hatidata_internal`; wire SQL cannot name that schema, see sql_bridge):

- `cot_traces`: one row per step. `content_hash` and `chain_hash` are defined in
  `ledger_hash` (RFC 8785 canonical JSON + SHA-256); `prev_hash` is the previous step's
  chain_hash. UNIQUE(org_id, agent_id, session_id, step_index): even a writer that got
  past the per-session lock could not fork a chain.
- `cot_sessions`: the head of each chain (total_steps, head_hash, first/last timestamp).
  It allocates step numbers and lets verify notice deleted *last* steps.
- `cot_org_chain`, `cot_org_heads`: the organisation chain (`orgchain.py`), one entry
  per step of every session of the organisation, written in the same transaction as the
  step, so a whole deleted session or its deleted last steps are still named.
- `cot_approvals`: immutable approve / reject records.

Read-only, identity-filtered views in main: `_hatidata_cot_traces`,
`_hatidata_cot_sessions`, `_hatidata_cot_approvals`. No function updates or deletes a
trace or an approval; DuckDB has no triggers or grants, so direct edits of the internal
tables (which only server code can reach) are what `verify_chain` detects.

Sessions are namespaced per agent: (org, agent, session_id). Another agent's session
with the same id is simply a different session, so nothing about it leaks: reading it
is not_found. An identity with the `cot:admin` scope (REST auditors/admins) may name
any agent of its org (`agent_id` argument, trace agent_id on ingest); when it omits
agent_id for a session, the session is looked up across the org.

Ingest (`ingest_traces`): at most 1000 traces, validated first (ledger_input), then one
transaction: all or nothing. Steps of a session are appended in input order. A
trace_id already stored with the same session, agent, type, timestamp, parent and
content is an idempotent retry (status 'duplicate', not appended again); the same
trace_id with anything different is a conflict (55000 / 409).

With `lake_catalog` set the five tables live in the agent lake, one ledger for every
proxy (proxy/db/agent_lake_views.py: reads keep the local names, writes go to the lake).
A DuckLake has no keys, so what keeps one chain is a conflict: each append's transaction
first updates the one row of `cot_ledger_clock`, then reads the heads and writes the
steps, the session head and the organisation chain; two appends in flight on any proxies
conflict at commit (40001) and the later one is run again on the heads the first wrote
(`_retry`, jittered, many attempts: a lake transaction takes ~100 ms or more). Appends
from all proxies are so serialised, as they are per organisation within one process.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import logging
import weakref
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.ledger import append as ledger_append
from proxy.agent.ledger import orgchain
from proxy.agent.ledger.hashing import canonical_json
from proxy.agent.ledger.inputs import Trace
from proxy.agent.ledger.inputs import name as _name
from proxy.agent.ledger.schema import (
    APPROVALS,
    CLOCK,
    ORG_CHAIN,
    SESSIONS,
    STEP_COLUMNS,
    TABLES,
    TRACES,
    is_admin,
)
from proxy.agent.ledger.verify import check_org, decode_step, verify_steps
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.relations import agent_relation
from proxy.db.agent_lake import create, lake_table
from proxy.db.agent_lake_views import share, unshare
from proxy.db.conflicts import CONFLICT_OR_DUPLICATE, again_on_conflict_async

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.ledger")

_MINE = "WHERE org_id = $org_id AND agent_id = $agent_id"
agent_relation(
    "_hatidata_cot_traces", f"SELECT * FROM {TRACES} {_MINE}", "The caller's reasoning steps"
)
agent_relation(
    "_hatidata_cot_sessions", f"SELECT * FROM {SESSIONS} {_MINE}", "The caller's reasoning sessions"
)
agent_relation(
    "_hatidata_cot_approvals",
    f"SELECT * FROM {APPROVALS} {_MINE}",
    "Approvals and rejections of the caller's sessions",
)


class Ledger:
    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        # One lock per live session; a lock disappears once nobody holds or awaits it.
        self._locks: weakref.WeakValueDictionary[tuple[str, str, str], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._tasks: set[asyncio.Task[Any]] = set()
        # Appends of one organisation extend one chain: one at a time (orgchain.py).
        self._org_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        # The organisation heads this server last wrote or read at start: a rewrite of
        # the chain's tail and head while it runs is caught against these.
        self.org_heads: dict[str, tuple[int, str]] = {}
        self._upgrade = False
        self.shared = bool(getattr(layer.config, "lake_catalog", ""))
        self.conflicts = 0  # appends run again after a conflict (40001 in the lake)
        self.appends = 0

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Create the tables and the identity-filtered views (idempotent)."""
        unshare(cur, TABLES)
        self._upgrade = not self.shared and not orgchain.exists(cur)
        if not self._upgrade:
            orgchain.create(cur)  # a dropped head table comes back empty: verify says so
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {TRACES} (
                trace_id UUID NOT NULL,
                org_id VARCHAR NOT NULL,
                agent_id VARCHAR NOT NULL,
                session_id VARCHAR NOT NULL,
                step_index BIGINT NOT NULL,
                step_type VARCHAR NOT NULL,
                content JSON NOT NULL,
                metadata JSON,
                importance DOUBLE,
                timestamp TIMESTAMPTZ NOT NULL,
                parent_trace_id UUID,
                content_hash VARCHAR NOT NULL,
                prev_hash VARCHAR NOT NULL,
                chain_hash VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (org_id, trace_id),
                UNIQUE (org_id, agent_id, session_id, step_index)
            )"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {SESSIONS} (
                org_id VARCHAR NOT NULL,
                agent_id VARCHAR NOT NULL,
                session_id VARCHAR NOT NULL,
                total_steps BIGINT NOT NULL,
                head_hash VARCHAR NOT NULL,
                started_at TIMESTAMPTZ NOT NULL,
                ended_at TIMESTAMPTZ NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (org_id, agent_id, session_id)
            )"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {APPROVALS} (
                id UUID PRIMARY KEY,
                org_id VARCHAR NOT NULL,
                agent_id VARCHAR NOT NULL,
                session_id VARCHAR NOT NULL,
                trace_id UUID,
                decision VARCHAR NOT NULL CHECK (decision IN ('approve', 'reject')),
                reason VARCHAR,
                reviewed_by VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )"""
        )
        if self.shared:
            share(cur, TABLES)
            create(cur, f"CREATE TABLE IF NOT EXISTS {lake_table(CLOCK)} (n BIGINT NOT NULL)")
            # two proxies starting at once may add two rows: appends update them all
            create(
                cur,
                f"INSERT INTO {lake_table(CLOCK)} SELECT 0"
                f" WHERE NOT EXISTS (SELECT 1 FROM {lake_table(CLOCK)})",
            )

    async def start(self) -> None:
        if self._upgrade:  # steps written before the organisation chain existed

            def upgrade(cur: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, str]]:
                orgchain.create(cur)
                return orgchain.backfill(
                    cur, lambda rows, head: verify_steps([decode_step(r) for r in rows], head)
                )

            self.org_heads = await self.layer.db.transaction(upgrade)
            self._upgrade = False
        else:
            self.org_heads = await self.layer.db.run(orgchain.read_heads)

    async def stop(self) -> None:
        if self.shared and self.appends:  # how contended the shared chain heads were
            log.info(
                "ledger: %d appends, %d run again after a conflict", self.appends, self.conflicts
            )
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- appending ---------------------------------------------------------------------

    async def append(self, who: Identity, traces: list[Trace]) -> list[dict[str, Any]]:
        """Append validated traces (in order) under their sessions' locks, in one
        transaction. Returns one row per input trace: ingested or duplicate."""
        if not traces:
            return []
        keys = sorted({(who.org_id, t.agent_id, t.session_id) for t in traces})
        locks = [self._lock(k) for k in keys]  # strong refs while we hold them
        locks.append(self._org_lock(who.org_id))  # always last: no lock-order cycle
        for lock in locks:  # sorted order: two multi-session ingests cannot deadlock
            await lock.acquire()
        try:
            rows, org_head = await self._retry(
                lambda: self.layer.db.transaction(
                    lambda cur: ledger_append.append_tx(cur, who, traces)
                ),
                attempts=40 if self.shared else 8,
            )
            self.appends += 1
            if org_head is not None:
                self.org_heads[who.org_id] = org_head
        finally:
            for lock in reversed(locks):
                lock.release()
        for row, trace in zip(rows, traces, strict=True):
            if row["status"] == "ingested":
                self._notify(who, row["trace_id"], trace.content)
        return rows

    def _lock(self, key: tuple[str, str, str]) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock

    def _org_lock(self, org: str) -> asyncio.Lock:
        lock = self._org_locks.get(org)
        if lock is None:
            lock = asyncio.Lock()
            self._org_locks[org] = lock
        return lock

    async def _retry(self, op, attempts: int = 8):
        # Other writers of the database can still collide inside DuckDB's optimistic
        # concurrency (a write-write conflict aborts one transaction; two inserts of one
        # organisation chain seq violate its key): the whole transaction is recomputed
        # from what is committed then, so a retry is safe.
        def counted() -> None:
            self.conflicts += 1

        try:
            # in the lake the other writer is another proxy's append of ~100 ms: wait longer
            return await again_on_conflict_async(
                op,
                attempts=attempts,
                step=0.02 if self.shared else 0.005,
                errors=CONFLICT_OR_DUPLICATE,
                on_retry=counted,
            )
        except CONFLICT_OR_DUPLICATE as exc:
            log.warning("ledger append failed %d times: %s", attempts, exc)
            busy = AgentError.conflict("the ledger was busy; try again")
            busy.hint = "if this persists, verify_ledger() reports a damaged ledger"
            raise busy from None

    def _notify(self, who: Identity, trace_id: str, content: Any) -> None:
        """Hand a new step to the triggers service; never block or fail the append."""
        notify = getattr(self.layer.triggers, "notify", None)
        if notify is None:
            return
        if isinstance(content, str):
            text = content
        elif isinstance(content, dict) and isinstance(content.get("text"), str):
            text = content["text"]
        else:
            text = canonical_json(content)
        try:
            result = notify(who, "reasoning", trace_id, text, None)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except Exception:
            log.exception("triggers.notify failed for trace %s", trace_id)

    # -- reading -----------------------------------------------------------------------

    async def resolve(self, who: Identity, session_id: Any, agent_id: Any) -> str:
        """The agent whose session `session_id` the caller means; not_found otherwise."""
        session_id = _name("session_id", session_id)
        if agent_id is not None:
            agent_id = _name("agent_id", agent_id)
            if agent_id != who.agent_id and not is_admin(who):
                raise AgentError.not_found(f"no reasoning session {session_id!r}")
        candidates = [agent_id] if agent_id is not None else [who.agent_id]
        if agent_id is None and is_admin(who):
            candidates = []  # search the org, the caller's own agent first

        def find(cur: duckdb.DuckDBPyConnection) -> list[str]:
            # The organisation chain too: a session deleted from the other two is found
            # there, and verify reports it deleted instead of unknown.
            sql = (
                f"SELECT agent_id FROM {SESSIONS} WHERE org_id = ? AND session_id = ? "
                f"UNION SELECT agent_id FROM {TRACES} WHERE org_id = ? AND session_id = ? "
                f"UNION SELECT agent_id FROM {ORG_CHAIN} WHERE org_id = ? AND session_id = ?"
            )
            return sorted({r[0] for r in cur.execute(sql, [who.org_id, session_id] * 3).fetchall()})

        agents = await self.layer.db.run(find)
        if candidates:
            if candidates[0] in agents:
                return candidates[0]
        elif who.agent_id in agents:
            return who.agent_id
        elif len(agents) == 1:
            return agents[0]
        elif len(agents) > 1:
            raise AgentError.invalid(
                f"session {session_id!r} exists for several agents; pass agent_id",
                hint="agents: " + ", ".join(agents[:10]),
            )
        raise AgentError.not_found(f"no reasoning session {session_id!r}")

    async def load(
        self, who: Identity, agent_id: str, session_id: str
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None, list[dict[str, Any]]]:
        """A session's stored steps (step_index order), its head record and its
        organisation chain entries, read in one transaction (one snapshot)."""

        def read(cur: duckdb.DuckDBPyConnection):
            steps = cur.execute(
                f"SELECT {STEP_COLUMNS} FROM {TRACES} WHERE org_id = ? AND agent_id = ? "
                "AND session_id = ? ORDER BY step_index",
                [who.org_id, agent_id, session_id],
            )
            names = [d[0] for d in steps.description]
            rows = [dict(zip(names, r, strict=True)) for r in steps.fetchall()]
            head = cur.execute(
                f"SELECT total_steps, head_hash, started_at, ended_at FROM {SESSIONS} "
                "WHERE org_id = ? AND agent_id = ? AND session_id = ?",
                [who.org_id, agent_id, session_id],
            ).fetchone()
            return rows, head, orgchain.session_entries(cur, who.org_id, agent_id, session_id)

        rows, head, entries = await self.layer.db.transaction(read)
        steps = [decode_step(r) for r in rows]
        head_doc = (
            None
            if head is None
            else {
                "total_steps": head[0],
                "head_hash": head[1],
                "started_at": head[2],
                "ended_at": head[3],
            }
        )
        return steps, head_doc, entries

    async def verify(self, who: Identity, session_id: Any, agent_id: Any = None):
        """The session's own chain, then the organisation chain's record of it."""
        agent = await self.resolve(who, session_id, agent_id)
        steps, head, entries = await self.load(who, agent, session_id)
        result = verify_steps(steps, head)
        check_org(result, steps, entries)
        return agent, steps, head, result

    async def sessions(
        self, who: Identity, limit: int, agent_id: str | None, since: dt.datetime | None
    ) -> list[dict[str, Any]]:
        if agent_id is not None and agent_id != who.agent_id and not is_admin(who):
            return []  # another agent's sessions are invisible, not forbidden
        if agent_id is None and not is_admin(who):
            agent_id = who.agent_id

        def read(cur: duckdb.DuckDBPyConnection):
            sql = (
                f"SELECT agent_id, session_id, total_steps, head_hash, started_at, ended_at "
                f"FROM {SESSIONS} WHERE org_id = ?"
            )
            args: list[Any] = [who.org_id]
            if agent_id is not None:
                sql += " AND agent_id = ?"
                args.append(agent_id)
            if since is not None:
                sql += " AND ended_at >= ?"
                args.append(since)
            sql += " ORDER BY ended_at DESC, session_id LIMIT ?"
            args.append(limit)
            heads = cur.execute(sql, args).fetchall()
            if not heads:
                return heads, [], []
            keys = [f"{a}\x00{s}" for a, s, *_ in heads]
            steps = cur.execute(
                f"SELECT {STEP_COLUMNS} FROM {TRACES} WHERE org_id = ? "
                "AND list_contains(?::VARCHAR[], agent_id || chr(0) || session_id) "
                "ORDER BY agent_id, session_id, step_index",
                [who.org_id, keys],
            )
            names = [d[0] for d in steps.description]
            rows = [dict(zip(names, r, strict=True)) for r in steps.fetchall()]
            return heads, rows, orgchain.entries_of(cur, who.org_id, keys)

        heads, rows, entries = await self.layer.db.transaction(read)
        recorded: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for e in entries:
            recorded.setdefault((e["agent_id"], e["session_id"]), []).append(e)
        by_session: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in rows:
            by_session.setdefault((r["agent_id"], r["session_id"]), []).append(decode_step(r))
        out = []
        for agent, session, total, head_hash, started, ended in heads:
            steps = by_session.get((agent, session), [])
            check = verify_steps(steps, {"total_steps": total, "head_hash": head_hash})
            check_org(check, steps, recorded.get((agent, session), []))
            out.append(
                {
                    "session_id": session,
                    "agent_id": agent,
                    "total_steps": len(steps),
                    "chain_valid": check.chain_valid,
                    "started_at": started,
                    "ended_at": ended,
                }
            )
        return out
