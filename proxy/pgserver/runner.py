"""Runs a session's statements on DuckDB (on the connection's own thread), transactions,
portals.

The Runner owns the session's DuckDB cursor. A DuckDB cursor holds one pending
result at a time, so a suspended portal that still owns it is drained into
memory before another statement runs (rare: only interleaved portals do that).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.access.owner_txn import PendingOwners
from proxy.core.identity import Identity
from proxy.db.commit_clock import OpenWrite
from proxy.db.duckdb_errors import map_duckdb_error
from proxy.db.engine import Engine
from proxy.db.settings import SessionSettings
from proxy.db.turns import asked_since
from proxy.pgserver import (
    after_triggers,
    agent_relations,
    arrow_results,
    commands,
    conflict_retry,
    ddl_dispatch,
    describe_sql,
    dml_ctes,
    do_blocks,
    embed_columns,
    explain,
    fk_checks,
    foreign_keys,
    matviews,
    owner_guard,
    owner_outcome,
    parsed_sql,
    portal_outcome,
    read_only,
    savepoints,
    sql_cursors,
    statement_start,
    unique_violation,
)
from proxy.pgserver.column_origins import OriginMap
from proxy.pgserver.notify_wire import SessionNotify
from proxy.pgserver.params import ParamTypes, decode_params
from proxy.pgserver.portal import Portal
from proxy.pgserver.result_shape import ROW_KINDS, command_tag, returns_rows
from proxy.pgserver.results import Column, check_formats, encoders_for, row_description
from proxy.pgserver.row_stream import send_rows
from proxy.pgserver.setting_mirror import SettingMirror
from proxy.pgserver.statement_clock import statement_timed_out
from proxy.semantic.embedded_columns import is_embed_column_call
from proxy.telemetry.metrics import QueryObserver, timed_statement
from proxy.wire import messages as m
from proxy.wire.errors import FatalError, PgError
from transpiler import Statement

if TYPE_CHECKING:
    from proxy.agent.layer import AgentLayer
    from proxy.pgserver.contexts import ClientSession
    from proxy.semantic.engine import SemanticEngine

log = logging.getLogger("hatiproxy.runner")


class Runner:
    def __init__(
        self,
        engine: Engine,
        settings: SessionSettings,
        semantic: SemanticEngine,
        agent: AgentLayer | None = None,
    ) -> None:
        self.engine = engine
        self.semantic = semantic
        self.agent = agent  # None: agent functions are refused on this connection
        self.cursor = engine.cursor()
        self.settings = settings
        self.txn_status = "I"
        # In an implicit block: a DuckDB transaction the client did not BEGIN (a Query of
        # several statements, or extended-protocol DML until Sync); BEGIN makes it explicit.
        self.implicit = False
        self.pipelined = False  # that block is extended-protocol DML's (a pipeline)
        self._owner: Portal | None = None
        self.running = False  # a call is in DuckDB (read by the watchdog's thread)
        self.started = 0.0
        self.deadline: float | None = None
        # When the running statement arrived (its wait for a turn included): its
        # statement_timeout counts from there, as PostgreSQL's does. None between them.
        self.since: float | None = None
        self._interrupt_reason: str | None = None
        self.param_types = ParamTypes(engine)
        self.origins = OriginMap()
        self.mirror = SettingMirror()  # settings mirrored as DuckDB variables
        self.who: Identity | None = None  # the agent identity, fixed at connect
        self.observer: QueryObserver | None = None  # set by the connection (metrics)
        self.write = OpenWrite()  # a write outside an explicit block, until it settles
        self.shown = agent_relations.ShownRelations(self.cursor)  # the last statement's
        self.sizes = arrow_results.ResultSizes()  # short results read without Arrow
        self.parsed = parsed_sql.ParsedStatements()  # DuckDB's parses of repeated texts
        # Owner records of DDL in the open block, applied at COMMIT (owner_outcome.py);
        # so are its NOTIFY / LISTEN (notify_wire.py; the connection sets it at login).
        self.pending_owners, self.notify = PendingOwners(), SessionNotify()

    def settled(self, query: bool = True) -> bool:
        """Whether agent relations registered now stay in place: a plain query outside a
        transaction block (proxy/execution/relation_cache.py)."""
        return query and self.txn_status == "I" and not self.implicit

    async def show_agent_relations(self, st: Statement) -> None:
        """The caller's rows of the agent relations `st` names, on the cursor (statements
        that do not go through _start: COPY)."""
        relations = await agent_relations.named_rows(self.agent, self.who, st)
        if self.shown.needed(relations):
            await self.call(self.shown.show, relations)

    async def set_identity(self, who: Identity) -> None:
        """Fix the connection's agent identity: whose rows its agent relations show."""
        self.who = who

    async def call(self, fn: Callable[..., Any], *args: Any, sql: str | None = None) -> Any:
        """Run fn (DuckDB work) under the statement timeout; map DuckDB errors.

        The engine's watchdog interrupts it at the deadline or when the client hangs up.
        """
        timeout_ms = self.settings.statement_timeout_ms
        self._interrupt_reason = None
        self.started = time.monotonic()
        if timeout_ms:
            since = self.started if self.since is None else self.since
            self.deadline = since + timeout_ms / 1000
            if self.deadline <= self.started:
                raise statement_timed_out()
            self.engine.watchdog.deadline_set(self.deadline)
        self.running = True
        try:
            return await self.engine.run(fn, *args)
        except duckdb.Error as exc:
            err = map_duckdb_error(exc, sql)
            if err.sqlstate == "57014" and self._interrupt_reason == "shutdown":
                raise FatalError(
                    "57P01", "terminating connection due to administrator command"
                ) from None
            if err.sqlstate == "57014" and self._interrupt_reason == "timeout":
                err.message = "canceling statement due to statement timeout"
            if err.sqlstate == "23514":  # name the CHECK, as PostgreSQL does
                foreign_keys.name_check_violation(self.cursor, err)
            elif err.sqlstate in ("23505", "23502"):  # the unique constraint, a column's schema
                await self.engine.run(unique_violation.name_violation, self.cursor, err, sql)
            raise err from None
        except PgError as err:  # mapped inside fn already (a subquery argument's rows)
            if err.sqlstate == "57014" and self._interrupt_reason == "timeout":
                err.message = "canceling statement due to statement timeout"
            raise
        finally:
            self.running = False
            self.deadline = None

    def interrupt(self, reason: str = "cancel") -> None:
        """Interrupt the running DuckDB statement (cancel, timeout, client gone); any thread."""
        if self.running:
            self._interrupt_reason = reason
            self.cursor.interrupt()

    def interrupted(self) -> bool:
        """Has the running call been interrupted? Python work inside a call (a column
        fill's model passes) asks between steps: cursor.interrupt() reaches only DuckDB."""
        return self._interrupt_reason is not None

    def _settle_writes(self) -> None:
        """No transaction open any more: the write committed or rolled back."""
        if self.txn_status == "I" and not self.implicit:
            self.write.end()

    async def begin_implicit(self) -> None:
        await self.call(self.cursor.begin)
        self.implicit, self.pipelined = True, False

    async def end_implicit(self) -> None:
        if self.implicit:
            self.implicit = False
            committed = False
            try:
                await self.call(self.cursor.commit)
                committed = True
            finally:
                owner_outcome.block_ended(self, committed)
                self._settle_writes()

    async def statement_failed(self) -> None:
        """After an error: an implicit block rolls back, an explicit one becomes failed."""
        self._release_owner_silently()
        if self.implicit:
            self.implicit = False
            owner_outcome.block_ended(self, committed=False)
            await self._rollback_quietly()
            self._settle_writes()
        elif self.txn_status == "T":
            self.txn_status = "E"
        else:  # an autocommit statement failed
            self.notify.discard()

    async def _rollback_quietly(self) -> None:
        with contextlib.suppress(PgError):
            await self.call(self.cursor.rollback)

    async def sync(self) -> None:
        if self.implicit:
            await self.end_implicit()

    def _release_owner_silently(self) -> None:
        self._owner = None

    async def take_cursor(self) -> None:
        """Drain a suspended portal's pending rows into memory before reusing the cursor."""
        owner = self._owner
        if owner is not None and owner.executed and not owner.done and not owner.drained:
            if owner.arrow is not None:
                await self.call(owner.arrow.drain)
                self._owner = None
                return
            owner.buffered = (owner.buffered or []) + await self.call(self.cursor.fetchall)
            owner.drained = True
        self._owner = None

    def close_portal(self, portal: Portal) -> None:
        if self._owner is portal:
            self._owner = None

    async def infer_param_oids(self, st: Statement, oids: list[int]) -> list[int]:
        await self.take_cursor()  # inference queries run on the session's cursor
        if st.agent_calls or st.agent_relations:
            # Empty relations of the right shape: the query's columns type its $n.
            await self.call(
                self.shown.show, agent_relations.empty_for(self.agent, st), self.settled()
            )
        return await self.param_types.infer(st, oids, self.call, self.cursor)

    def decode_params(
        self,
        oids: Sequence[int],
        formats: Sequence[int],
        values: Sequence[bytes | None],
        portal: str = "",
    ) -> list[Any]:
        tz = self.settings.values.get("TimeZone")
        return decode_params(oids, formats, values, tz, portal)

    # --- describe ---------------------------------------------------------------------

    async def describe_statement(
        self,
        st: Statement | None,
        param_oids: Sequence[int] = (),
        session: ClientSession | None = None,
    ) -> tuple[Column, ...] | None:
        """`session`: the client's (a data-modifying WITH transpiles its parts there)."""
        if st is None:
            return None
        if st.kind == "dml_cte" and session is not None:
            return await dml_ctes.describe(self, session, st, param_oids)
        if st.command is not None:
            return commands.describe(st)
        if sql_cursors.is_cursor_statement(st):
            return None  # described per portal: the cursor may not exist yet
        if st.kind == "explain":
            return explain.columns(st.sql)
        if not returns_rows(st):
            return None
        await self.take_cursor()
        return await describe_sql.describe(self, self.shown, st, param_oids)

    async def describe_portal(self, portal: Portal, session: ClientSession) -> None:
        # Describe runs a row query (Execute then streams it): its time and errors count.
        await timed_statement(self.observer, portal, self._describe_portal(portal, session))

    async def _describe_portal(self, portal: Portal, session: ClientSession) -> None:
        st = portal.statement
        if st is None:
            session.out(m.no_data())
            return
        if st.kind == "dml_cte":
            cols = await dml_ctes.describe(
                self, session, st, portal.prepared.param_oids if portal.prepared else ()
            )
        elif st.command is not None:
            cols = commands.describe(st)
        elif sql_cursors.is_cursor_statement(st):
            cols = sql_cursors.describe(session.sql_cursors, st)
        elif returns_rows(st):
            if st.kind in ROW_KINDS:
                # Running a query is side-effect free; its result then feeds Execute.
                await self._start(portal, session)
                cols = portal.columns
            else:
                cols = await self.describe_statement(st)
        else:
            cols = None
        if cols:
            check_formats(portal.result_formats, len(cols))
            session.out(row_description(cols, portal.result_formats))
        else:
            session.out(m.no_data())

    # --- execute ----------------------------------------------------------------------

    async def execute(
        self, portal: Portal, session: ClientSession, *, max_rows: int, describe: bool
    ) -> None:
        kind = portal.statement.kind if portal.statement is not None else None
        if kind == "do":
            return await do_blocks.run(self, session, portal)  # its statements come back here
        if kind == "dml_cte":
            return await dml_ctes.run(self, session, portal, max_rows, describe)  # parts too
        if await after_triggers.run(self, session, portal, describe):
            return  # with the AFTER / statement-level triggers it fires (parts come back)
        self.since = asked_since()  # db/turns.py: from the statement's arrival
        work = self._execute(portal, session, max_rows, describe)
        try:
            await timed_statement(self.observer, portal, work, execute=True)
        finally:
            self.since = None
            if self.write.open:
                self._settle_writes()  # an autocommit write, or a block's COMMIT

    async def _execute(
        self, portal: Portal, session: ClientSession, max_rows: int, describe: bool
    ) -> None:
        st = portal.statement
        assert st is not None
        if (
            self.txn_status == "E"
            and st.kind not in ("rollback", "commit")
            and not (st.kind == "savepoint" and "rollback" in st.sql.lower())
        ):
            raise PgError(
                "25P02",
                "current transaction is aborted, commands ignored until end of transaction block",
            )
        if st.outside_block and (self.txn_status != "I" or self.implicit):
            pipeline = self.implicit and self.pipelined
            where = (
                "be executed within a pipeline" if pipeline else "run inside a transaction block"
            )
            raise PgError("25001", f"{st.outside_block} cannot {where}")
        if read_only.writes(st) and read_only.in_effect(self.settings, self.txn_status != "I"):
            await self.take_cursor()
            await self.call(read_only.check, self.cursor, st)
        savepoints.note_statement(session.savepoints, self, st)
        # One that may change DuckDB's parser options drops the kept parses (parsed_sql.py).
        parsed_sql.note_statement(st.kind)
        try:
            await owner_guard.guarded(
                self,
                # owner records: the default database's only (proxy/db/databases.py)
                self.who if self.engine.is_default else None,
                portal,
                session.savepoints,
                lambda: self._dispatch(portal, session, max_rows, describe),
            )
        finally:
            parsed_sql.note_statement(st.kind)

    async def _dispatch(
        self, portal: Portal, session: ClientSession, max_rows: int, describe: bool
    ) -> None:
        st = portal.statement
        assert st is not None
        if sql_cursors.is_cursor_statement(st):  # DECLARE / FETCH / MOVE
            await sql_cursors.execute(self, session, portal, describe)
            return
        if st.command is not None:
            await commands.run(self, session, portal, describe)
            return
        if st.kind == "copy":
            from proxy.pgserver.copy import run_copy

            await run_copy(self, session, portal)
            return
        if st.kind in ("begin", "commit", "rollback", "savepoint"):
            raise PgError("0A000", f"{st.tag} is not supported in this form")
        if await ddl_dispatch.run(self, session, portal, max_rows, describe):
            return  # DDL the server carries out or checks around DuckDB (see there)
        st = portal.statement  # (a check may have given it PostgreSQL's form)
        assert st is not None
        if st.kind == "select" and is_embed_column_call(st.sql):
            await embed_columns.run_call(self, portal, session, describe)
            return
        await self.execute_duckdb(portal, session, max_rows, describe)

    async def _start(self, portal: Portal, session: ClientSession) -> None:
        """Run the portal's statement on DuckDB (once); rows stay pending on the cursor."""
        if portal.executed:
            return
        st = portal.statement
        assert st is not None
        self.semantic.check(st)
        await self.take_cursor()
        if matviews.may_read_unpopulated(st, id(self.engine)):
            await self.call(matviews.check_populated, self.cursor, st, id(self.engine))
        plan, cols, head = await portal_outcome.run_durably(self, portal, session)
        if plan.writes and self.txn_status == "T":
            portal_outcome.record_write(plan, portal, session, head)
        for warning in st.warnings:
            session.send_notice(warning, "01000", "WARNING")
        if portal_outcome.keep_result(plan, portal, cols, head):
            self._owner = portal
        if st.kind == "ddl":  # (the registry first: the hints read it)
            await fk_checks.after_ddl(self.call, self.cursor, st, plan.sql)
            self.param_types.invalidate()

    async def run_plan(
        self, plan: statement_start.StartPlan, portal: Portal
    ) -> statement_start.Outcome:
        """Run the plan on the worker thread: settings and agent relations in place
        first, a write-write conflict outside any block the client sees run again."""
        st, cur = plan.st, self.cursor
        tz = self.settings.values.get("TimeZone")

        def start() -> statement_start.Outcome:
            for statement in plan.setting_vars:
                cur.execute(statement)
            if self.shown.needed(plan.relations):
                query = st.kind == "select" and not plan.implicit_dml
                self.shown.show(plan.relations, self.settled(query))
            if plan.implicit_dml:
                cur.begin()
            # No key to check (not DML, or in a branch): the statement alone.
            return plan.fk.run(cur, run) if plan.fk.enabled else run()

        def run() -> statement_start.Outcome:
            pairs = self.origins.prepare(cur, st, self.settings.values.get("search_path"))
            plan.padded = self.origins.padded(pairs)
            cols, count, head = statement_start.execute(
                plan,
                cur,
                portal,
                self.semantic,
                self.agent,
                self.who,
                self.sizes,
                tz,
                self.parsed,
            )
            return self.origins.apply(st, cols, pairs), count, head

        # Outside any block the client sees, a write-write conflict is run again
        # (conflict_retry.py); the extended protocol's own DML block is begun anew.
        retry = self.txn_status == "I" and (plan.implicit_dml or not self.implicit)
        if plan.implicit_dml:
            # Set before running: if the DML fails, statement_failed must roll back the
            # transaction begun in start(), or DuckDB stays in an aborted transaction.
            self.implicit = self.pipelined = True
        return await conflict_retry.run(
            lambda: self.call(start, sql=plan.sql),
            retry=retry,
            undo=self._rollback_quietly if plan.implicit_dml else None,
            sql=plan.sql,
        )

    async def execute_duckdb(
        self, portal: Portal, session: ClientSession, max_rows: int, describe: bool
    ) -> None:
        st = portal.statement
        assert st is not None
        fresh = not portal.executed
        await self._start(portal, session)
        if portal.keep_rows is not None and fresh:  # a DML CTE's RETURNING (dml_ctes.py)
            await dml_ctes.keep(self, portal, session)
            return
        cols = portal.columns
        if cols is None:
            if fresh or portal.count is not None:
                session.out(m.command_complete(command_tag(st, portal.count or 0)))
            portal.count = None
            return
        check_formats(portal.result_formats, len(cols))
        if describe:
            session.out(row_description(cols, portal.result_formats))
        encoders = encoders_for(cols, tuple(portal.result_formats), *self.settings.output_styles())
        before = portal.rows_sent
        if await send_rows(self, portal, session, encoders, max_rows):
            return  # suspended
        portal.done = True
        if self._owner is portal:
            self._owner = None
        # The rows of this Execute, as PostgreSQL counts a portal run in pieces: the last
        # Execute of a suspended portal that finds no more rows says SELECT 0
        # (postgres.js's cursor calls back for every nonzero count).
        session.out(m.command_complete(command_tag(st, portal.rows_sent - before)))
