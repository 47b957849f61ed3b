"""Branches: sandbox copies of the data an agent can query and write, then merge or discard.

Layout
------
A branch is a schema `branch_<branch_id>` (branch_id: 32 lower-case hex digits) holding one
view per base table of `main` (`CREATE VIEW branch_x.t AS SELECT * FROM main.t`; tables and
views whose names start with `_hatidata`, and everything in `hatidata_internal`, are never
branched). Its metadata lives in `hatidata_internal.branches`. A branch belongs to the
(org_id, agent_id) that created it; for anyone else it does not exist (not_found).

Queries and copy-on-write
-------------------------
`branch_query(branch_id, sql)` transpiles `sql` (Postgres SQL) and runs its statements in ONE
transaction on a pooled cursor whose search_path is `branch_x,main` (restored afterwards), so
unqualified names resolve to the branch first. Before a statement writes to a table
(INSERT / UPDATE / DELETE / MERGE / ALTER / TRUNCATE / CREATE INDEX / CREATE OR REPLACE on
it) that is still a view in the branch, the view is replaced by a real copy of main's table
(copy-on-write) with all its constraints, together with the tables linked to it by FOREIGN
KEYs (also when a new table REFERENCES one): see branch_copy, branch_fk, branch_seq. The copy
is a snapshot of main taken at the first write; tables never written (and not linked to a
written one) keep showing main's live rows. New tables
created in the branch (unqualified CREATE TABLE) land in the branch schema, because DuckDB
creates in the first schema of the search path. Written tables are recorded in
`tables_copied`. Refused inside a branch: writes to any schema but the branch, DROP of a table
that exists in main (it would fall through to main's table), renaming such a table, TEMP
objects, reads of `hatidata_internal` or another branch, session/transaction statements,
ATTACH/COPY/PRAGMA and other statements whose targets cannot be determined.

The result of `branch_query` is the result of the LAST statement, one output row per result
row, in a single JSON column `row` holding `{column: value}` (values made JSON-safe: DECIMAL
-> float, dates/times -> ISO text, UUID -> text, BLOB -> "\\x<hex>"). A statement without a
result set gives one row `{"command": <tag>, "rows_affected": n}` (`rows_affected` only when
DuckDB reports a count). Results are capped at MAX_ROWS rows (more is an error, nothing is
committed). MCP returns the list of the `row` objects.

Merge
-----
See `proxy.agent.branches.merge`: in ONE transaction the branch's base tables are written
to main as the strategy (`branch_wins` or `main_wins`) says, then the branch schema is
dropped and the status becomes `merged`.

A branch is named by its id (32 hex digits, the UUID form or the schema name) or by its
name (`proxy.agent.branches.args.resolve`: a name picks its one active branch, or its only
branch; several are an invalid argument listing their ids).

Lifecycle: active -> merged | discarded | expired. Only active branches can be queried, merged
or discarded (otherwise: conflict, SQLSTATE 55000). `ttl_seconds` (> 0) sets `expires_at`;
`expire_branches()` expires the caller's overdue branches at once, and a background task
expires everybody's every EXPIRY_INTERVAL_S seconds (and once at start). An overdue branch is
also refused (and expired) when used.

Wire clients: `Branches.prepare_write_sync(cur, schema_name, sql)` does the copy-on-write for a
client that ran `SET search_path = 'branch_x,main'` and writes over the wire; see branch_wire.

Also: `tables` given to create are copied at once; every copy keeps a fingerprint of main
for diff / conflicts (branch_stats); committed branch_query calls are counted (query_count,
query_ms, last_activity_at); lifecycle triggers fire from create, query, merge and the sweep
(branch_events); a latest "reject" decision blocks merge (branch_approval); create, merge,
discard, expiry and decisions are appended to `hatidata_internal.branch_audit`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

import duckdb
from sqlglot import exp

from proxy.access import org_boundary, ownership, sql_policy
from proxy.agent.branches import approval as branch_approval
from proxy.agent.branches import events as branch_events
from proxy.agent.branches import stats as branch_stats
from proxy.agent.branches import wire as branch_wire
from proxy.agent.branches.args import resolve, tables_arg
from proxy.agent.branches.copy import branchable, transaction
from proxy.agent.branches.dbs import BranchDB
from proxy.agent.branches.merge import STRATEGIES, merge_tables
from proxy.agent.branches.run import run_statements
from proxy.agent.branches.sql import (
    SCHEMA_PREFIX,
    check_text,
    db_error,
    vet_statements,
)
from proxy.agent.branches.store import SELECT_COLUMNS, TABLE, audit, branch_row
from proxy.agent.branches.store import install as _install
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.sqltext import quote_ident
from proxy.db.catalog import org_scope
from transpiler import TranspileError, transpile

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.branches")

STATUSES = ("active", "merged", "discarded", "expired")
MAX_TTL_SECONDS = 365 * 24 * 3600
EXPIRY_INTERVAL_S = 60.0


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _actor(who: Identity) -> str:
    """Who did it, for the audit trail: the user (or agent), and the API key when there is one."""
    name = who.user or who.agent_id
    return f"{name} (key {who.key_id})" if who.key_id else name


def _ref(who: Identity, branch: dict[str, Any]) -> branch_events.BranchRef:
    return branch_events.BranchRef(who.org_id, who.agent_id, branch["branch_id"], branch["name"])


# --- the service --------------------------------------------------------------------------


class Branches:
    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        # Branch schemas in the users' database, their metadata in the agent's (dbs.py).
        self.db = BranchDB(layer.users_db, layer.db)
        self.expiry_interval = EXPIRY_INTERVAL_S
        self._task: asyncio.Task[None] | None = None
        self._locks: dict[str, asyncio.Lock] = {}

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Create this service's tables (idempotent)."""
        _install(cur)

    async def start(self) -> None:
        try:
            await self.expire_all()
        except Exception:  # a broken sweep must not stop the server starting
            log.exception("expiring branches at start failed")
        self._task = asyncio.create_task(self._expiry_loop(), name="branch-expiry")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _expiry_loop(self) -> None:
        while True:
            await asyncio.sleep(self.expiry_interval)
            try:
                await self.expire_all()
            except Exception:
                log.exception("expiring branches failed")

    def _lock(self, branch_id: str) -> asyncio.Lock:
        return self._locks.setdefault(branch_id, asyncio.Lock())

    # -- shared pieces --

    async def _resolve(self, who: Identity, branch: Any) -> str:
        """The id of the caller's branch `branch` names (its id or its name)."""
        return await self.db.run(
            lambda cur: resolve(
                cur, branch, "org_id = ? AND agent_id = ?", [who.org_id, who.agent_id]
            )
        )

    def _load(
        self, cur: duckdb.DuckDBPyConnection, who: Identity, branch_id: str
    ) -> dict[str, Any]:
        row = cur.execute(
            f"SELECT {SELECT_COLUMNS} FROM {TABLE} "
            "WHERE branch_id = ? AND org_id = ? AND agent_id = ?",
            [branch_id, who.org_id, who.agent_id],
        ).fetchone()
        if row is None:
            raise AgentError.not_found(f"branch {branch_id} does not exist")
        return branch_row(row)

    def _active(self, cur: duckdb.DuckDBPyConnection, who: Identity, branch_id: str) -> dict:
        """The caller's branch, if it can still be used; expires it when overdue."""
        branch = self._load(cur, who, branch_id)
        if branch["status"] == "active" and branch["expires_at"] <= _now():
            self._expire_one(cur, branch["branch_id"], branch["schema_name"])
            branch["status"] = "expired"
        if branch["status"] != "active":
            raise AgentError.conflict(
                f"branch {branch_id} is {branch['status']}: it can no longer be used"
            )
        return branch

    @staticmethod
    def _end(cur: duckdb.DuckDBPyConnection, branch_id: str, schema: str, status: str) -> None:
        cur.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
        cur.execute(
            f"UPDATE {TABLE} SET status = ?, ended_at = ? WHERE branch_id = ?",
            [status, _now(), branch_id],
        )

    # -- operations --

    async def create(
        self,
        who: Identity,
        name: str | None,
        description: str | None,
        ttl_seconds: Any,
        tables: Any = None,
    ) -> dict[str, Any]:
        """A new branch; `tables` (of main) are copied at once, the rest on first write."""
        if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int | float):
            raise AgentError.invalid("ttl_seconds must be a number of seconds")
        if not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise AgentError.invalid(f"ttl_seconds must be > 0 and <= {MAX_TTL_SECONDS}")
        if name is not None and not isinstance(name, str):
            raise AgentError.invalid("name must be a string")
        wanted = tables_arg(tables)
        limits = who.limits  # a key's allowed_schemas / allowed_tables
        denied = [t for t in wanted if limits is not None and not limits.allows("main", t)]
        owners = ownership.store()
        if not who.superuser:  # another organisation's tables: not copied, not branched
            denied += [t for t in wanted if org_boundary.foreign(who.org_id, owners, "main", t)]
        if denied:
            raise AgentError.forbidden(f"permission denied for relation {denied[0]}")
        branch_id = uuid.uuid4().hex
        schema = SCHEMA_PREFIX + branch_id
        name = (name or "").strip() or f"branch-{branch_id[:8]}"
        now = _now()
        expires = now + dt.timedelta(seconds=float(ttl_seconds))

        def work(cur: duckdb.DuckDBPyConnection) -> int:
            known = branchable(cur)
            unknown = [t for t in wanted if t.lower() not in known]
            if unknown:
                raise AgentError.invalid(
                    f"table {unknown[0]!r} is not a table of main", hint="tables: names in main"
                )
            tables = sorted(
                t
                for t in known.values()
                if who.superuser or not org_boundary.foreign(who.org_id, owners, "main", t)
            )
            cur.execute(f"CREATE SCHEMA {quote_ident(schema)}")
            for table in tables:
                target = f"{quote_ident(schema)}.{quote_ident(table)}"
                cur.execute(f"CREATE VIEW {target} AS SELECT * FROM main.{quote_ident(table)}")
            copied = [
                c for t in wanted for c in branch_wire.copy_into(cur, schema, known[t.lower()])
            ]
            cur.execute(
                f"INSERT INTO {TABLE} (branch_id, org_id, agent_id, name, description, "
                "schema_name, status, created_at, expires_at, base_tables, tables_copied, "
                "last_activity_at) VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?)",
                [branch_id, who.org_id, who.agent_id, name, description or "", schema, now,
                 expires, json.dumps(tables), json.dumps(copied), now],
            )  # fmt: skip
            audit(cur, branch_id, "created", _actor(who), {"tables_copied": wanted})
            return len(tables)

        count = await self.db.transaction(work)
        ref = branch_events.BranchRef(who.org_id, who.agent_id, branch_id, name)
        await branch_events.emit(self.layer, ref, "branch_created")
        return {
            "branch_id": branch_id,
            "schema_name": schema,
            "name": name,
            "status": "active",
            "table_count": count,
            "created_at": now,
            "expires_at": expires,
        }

    async def query(self, who: Identity, branch_id: Any, sql: Any) -> list[dict[str, Any]]:
        bid = await self._resolve(who, branch_id)
        if not isinstance(sql, str) or not sql.strip():
            raise AgentError.invalid("sql must be a non-empty string")
        try:
            # branches keep DuckDB's own foreign keys (branches/fk.py copies them)
            statements = tuple(st.native() for st in transpile(sql, vector_dims=self.layer.dims))
        except TranspileError as err:
            raise AgentError(
                "invalid_sql", err.message, sqlstate=err.sqlstate, http_status=422
            ) from None
        if not statements:
            raise AgentError.invalid("sql holds no statement")
        prepared = vet_statements(statements)
        sql_policy.check_agent_sql(statements, who)  # the key's SQL rules hold in branches too

        def work(cur: duckdb.DuckDBPyConnection) -> tuple[list[dict[str, Any]], dict, int]:
            started = time.monotonic()
            branch = self._active(cur, who, bid)
            schema = branch["schema_name"]
            check_text(statements, schema)
            before = cur.execute("SELECT current_setting('search_path')").fetchone()[0]
            cur.execute(f"SET search_path = '{schema},main'")  # schema: branch_<hex> only
            if not who.superuser:  # its catalogs list only its organisation's objects
                org_scope.scope_to(cur, who.org_id)
            try:
                return transaction(cur, lambda: self._run_counted(cur, branch, prepared, started))
            finally:  # the cursor goes back to the pool: leave it as we found it
                if not who.superuser:
                    org_scope.unscope(cur)
                if before:
                    cur.execute("SET search_path = '{}'".format(before.replace("'", "''")))
                else:
                    cur.execute("RESET search_path")

        async with self._lock(bid):
            rows, branch, count = await self.db.run(work)
        ref, since = _ref(who, branch), branch["created_at"]
        await branch_events.emit(self.layer, ref, "query_count_exceeded", count, since=since)
        await branch_events.emit(
            self.layer, ref, "storage_exceeded", since=since, measure=lambda: self._bytes(bid)
        )
        return rows

    def _run_counted(
        self,
        cur: duckdb.DuckDBPyConnection,
        branch: dict[str, Any],
        prepared: list[tuple[Any, exp.Expr | None]],
        started: float,
    ) -> tuple[list[dict[str, Any]], dict, int]:
        """Run the statements, then count the query (in the same transaction)."""
        rows = run_statements(cur, branch, prepared)
        (count,) = cur.execute(
            f"UPDATE {TABLE} SET query_count = coalesce(query_count, 0) + 1, "
            "query_ms = coalesce(query_ms, 0) + ?, last_activity_at = ? WHERE branch_id = ? "
            "RETURNING query_count",
            [(time.monotonic() - started) * 1000.0, _now(), branch["branch_id"]],
        ).fetchone()
        return rows, branch, int(count)

    async def _bytes(self, branch_id: str) -> float:
        """Logical bytes the branch holds now (its tables and snapshots)."""

        def work(cur: duckdb.DuckDBPyConnection) -> float:
            row = cur.execute(
                f"SELECT schema_name, status FROM {TABLE} WHERE branch_id = ?", [branch_id]
            ).fetchone()
            if row is None or row[1] != "active":
                return 0.0
            size = branch_stats.storage(cur, row[0])
            return float(size["data_bytes"] + size["snapshot_bytes"])

        return await self.db.run(work)

    async def merge(self, who: Identity, branch_id: Any, strategy: Any) -> dict[str, Any]:
        bid = await self._resolve(who, branch_id)
        if strategy not in STRATEGIES:
            raise AgentError.invalid(
                f"unknown merge strategy {strategy!r}", hint="use branch_wins or main_wins"
            )

        def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            # Checked before the transaction, so expiring an overdue branch (and the audit of
            # a refused merge) is not rolled back.
            self._active(cur, who, bid)
            branch_approval.check_mergeable(cur, bid, _actor(who))

            def inner() -> dict[str, Any]:
                branch = self._active(cur, who, bid)
                schema = branch["schema_name"]
                try:
                    report = merge_tables(cur, schema, strategy)
                except duckdb.Error as exc:
                    raise db_error(exc) from None
                merged_at = _now()
                cur.execute(f"DROP SCHEMA {quote_ident(schema)} CASCADE")
                cur.execute(
                    f"UPDATE {TABLE} SET status = 'merged', merged_at = ?, ended_at = ?, "
                    "strategy = ?, merge_report = ? WHERE branch_id = ?",
                    [merged_at, merged_at, strategy, json.dumps(report), bid],
                )
                audit(cur, bid, "merged", _actor(who), {"strategy": strategy, "tables": report})
                return {
                    "branch_id": bid,
                    "status": "merged",
                    "strategy": strategy,
                    "merged_at": merged_at,
                    "tables": report,
                }

            return transaction(cur, inner)

        async with self._lock(bid):
            branch = await self.db.run(lambda cur: self._active(cur, who, bid))
            await branch_events.emit(self.layer, _ref(who, branch), "merge_requested")
            out = await self.db.run(work)
        self._locks.pop(bid, None)
        return out

    async def discard(self, who: Identity, branch_id: Any) -> dict[str, Any]:
        bid = await self._resolve(who, branch_id)

        def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            def inner() -> dict[str, Any]:
                branch = self._load(cur, who, bid)
                if branch["status"] != "active":
                    raise AgentError.conflict(f"branch {bid} is already {branch['status']}")
                self._end(cur, bid, branch["schema_name"], "discarded")
                audit(cur, bid, "discarded", _actor(who))
                return {"branch_id": bid, "status": "discarded", "discarded_at": _now()}

            return transaction(cur, inner)

        async with self._lock(bid):
            out = await self.db.run(work)
        self._locks.pop(bid, None)
        return out

    async def list_branches(self, who: Identity, status: Any) -> list[dict[str, Any]]:
        if status in (None, "", "all"):
            status = None
        elif status not in STATUSES:
            raise AgentError.invalid(
                f"unknown branch status {status!r}", hint="one of " + ", ".join(STATUSES)
            )
        await self.expire(who)  # so an overdue branch is listed as expired, not active

        def work(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            sql = f"SELECT {SELECT_COLUMNS} FROM {TABLE} WHERE org_id = ? AND agent_id = ?"
            args: list[Any] = [who.org_id, who.agent_id]
            if status is not None:
                sql += " AND status = ?"
                args.append(status)
            return [
                branch_row(r) for r in cur.execute(sql + " ORDER BY created_at", args).fetchall()
            ]

        return await self.db.run(work)

    async def expire(self, who: Identity | None) -> list[dict[str, Any]]:
        """Expire overdue active branches: the caller's, or everybody's (who=None)."""

        def work(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            sql = (
                f"SELECT branch_id, name, schema_name, expires_at FROM {TABLE} "
                "WHERE status = 'active' AND expires_at <= ?"
            )
            args: list[Any] = [_now()]
            if who is not None:
                sql += " AND org_id = ? AND agent_id = ?"
                args += [who.org_id, who.agent_id]
            out = []
            for bid, name, schema, expires_at in cur.execute(sql, args).fetchall():
                try:  # one branch per transaction: a failure leaves the others expired
                    transaction(cur, lambda b=bid, s=schema: self._expire_one(cur, b, s))
                except duckdb.Error:
                    log.exception("expiring branch %s failed", bid)
                    continue
                out.append(
                    {"branch_id": bid, "name": name, "status": "expired", "expires_at": expires_at}
                )
            return out

        out = await self.db.run(work)
        for row in out:
            self._locks.pop(row["branch_id"], None)
        # The same sweep reports branches idle too long (idle_timeout lifecycle triggers).
        await branch_events.sweep_idle(
            self.layer, None if who is None else who.org_id, None if who is None else who.agent_id
        )
        return out

    def _expire_one(self, cur: duckdb.DuckDBPyConnection, branch_id: str, schema: str) -> None:
        self._end(cur, branch_id, schema, "expired")
        audit(cur, branch_id, "expired", None)

    async def expire_all(self) -> int:
        return len(await self.expire(None))

    # -- wire helper --

    def prepare_write_sync(
        self,
        cur: duckdb.DuckDBPyConnection,
        schema_name: str,
        statement_sql: str,
        who: Identity | None = None,
    ) -> list[str]:
        """Copy-on-write for a wire session writing in a branch: see branch_wire.prepare_write."""
        return self.db.with_session_cursor(
            cur, lambda both: branch_wire.prepare_write(both, schema_name, statement_sql, who)
        )
