"""One client session after authentication: simple and extended query protocol.

The session owns the connection's DuckDB cursor, its settings, prepared
statements, portals and transaction state. It receives decoded frontend
messages, runs statements through `Runner` (DuckDB on worker threads) and
queues backend messages with `out`; the server shell owns the socket.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from proxy.access import sql_policy
from proxy.db.backends import Activity
from proxy.db.settings import SessionSettings
from proxy.pgserver import sql_cursors, sql_prepared, statement_log, triggers
from proxy.pgserver.extended_query import ExtendedSteps
from proxy.pgserver.portal import Portal, Prepared
from proxy.pgserver.runner import Runner
from proxy.pgserver.savepoint_log import SavepointState
from proxy.pgserver.sequence_values import SessionSequences
from proxy.pgserver.temp_on_commit import TempOnCommit
from proxy.semantic import column_hints
from proxy.wire import messages as m
from proxy.wire.errors import FatalError, PgError, ProtocolViolation
from transpiler import ColumnHints, Statement, TranspileError, transpile
from transpiler.sql_prepare import message_pieces

log = logging.getLogger("hatiproxy.session")


# An extended-protocol step: Session._parse, _bind, _describe, _execute, _close_step.
_Step = Callable[["Session", m.FrontendMessage], Awaitable[None]]


# A message's writes after DDL in it are transpiled again (Session._after_ddl), when it
# holds at most _AGAIN statements (each time costs transpiling all of them).
_HINTED = frozenset({"insert", "update", "merge"})
_AGAIN = 32


def internal_error(exc: BaseException) -> PgError:
    return PgError("XX000", f"internal error: {type(exc).__name__}: {exc}")


Receive = Callable[[], Awaitable["m.FrontendMessage"]]


@dataclass
class SessionIdentity:
    user: str
    database: str
    process_id: int
    secret_key: int
    startup: dict[str, str] = field(default_factory=dict)
    remote: str = "local"  # the client's address:port, for the statement log

    @property
    def agent_id(self) -> str | None:
        return self.startup.get("hatidata_agent_id")


class Session(ExtendedSteps):
    def __init__(
        self,
        runner: Runner,
        identity: SessionIdentity,
        settings: SessionSettings,
        out: Callable[[bytes], None],
        flush: Callable[[], Awaitable[None]],
        flush_if_large: Callable[[], Awaitable[None]],
        receive: Receive,
        push: Callable[[], None],
        sync_next: Callable[[], bool] = lambda: False,
    ) -> None:
        self.runner = runner
        self.identity = identity
        self.settings = settings
        self.out = out
        self.flush = flush
        self.flush_if_large = flush_if_large
        self.receive = receive
        self.push = push
        self.sync_next = sync_next  # the client's next message, already here, is a Sync
        self.in_extended_block = False
        self.prepared: dict[str, Prepared] = {}
        self.sql_prepared: sql_prepared.SqlPrepared = {}  # SQL PREPARE (sql_prepared.py)
        self.portals: dict[str, Portal] = {}
        self.skip_until_sync = False
        self.activity = Activity()  # pg_stat_activity's view of this session
        self.sql_cursors = (
            sql_cursors.CursorSet()
        )  # DECLARE ... CURSOR (proxy/pgserver/sql_cursors.py)
        self.savepoints = SavepointState()  # the open block's savepoints and write log
        self.sequences = SessionSequences()  # currval / lastval (sequence_values.py)
        self.temp_on_commit = TempOnCommit()  # ON COMMIT DROP / DELETE ROWS tables
        self.statement_sql: str | None = None  # the SQL a failure is logged with
        self.idle = False  # ReadyForQuery 'I' sent, no message since: notifications may go

    def log_who(self) -> statement_log.Who:
        """This session, as the statement log names it."""
        who = self.runner.who
        return statement_log.Who(
            self.identity.process_id,
            self.identity.user,
            who.agent_id if who is not None else None,
            self.settings.values.get("application_name", ""),
            self.identity.remote,
        )

    def _log_failure(self, exc: PgError) -> None:
        statement_log.failed(self.log_who(), exc, self.statement_sql)

    # --- dialect ---------------------------------------------------------------

    @property
    def dialect(self) -> str:
        value = self.settings.values.get("hatidata.dialect", "postgres") or "postgres"
        return value.lower()

    def transpile_sql(self, sql: str, hints: ColumnHints | None) -> tuple[Statement, ...]:
        """hints: catalog facts for semantic SQL, UPDATEs and INSERTs (column_hints.ready)."""
        try:
            statements = transpile(sql, dialect=self.dialect, hints=hints)
        except TranspileError as exc:
            raise PgError(
                exc.sqlstate, exc.message, position=exc.position, detail=exc.detail, hint=exc.hint
            ) from exc
        column_hints.note(self.runner, statements)
        self.runner.origins.note(self.runner, statements)
        # Read-only keys, server files, allowed tables; `who` is set at login.
        sql_policy.check_all(statements, self.runner.who, self.settings.values.get("search_path"))
        return statements

    # --- dispatch --------------------------------------------------------------

    async def handle(self, msg: m.FrontendMessage) -> bool:
        """Handle one message; False when the client asked to terminate."""
        self.idle = False
        step = _EXTENDED_STEPS.get(type(msg))
        if step is None:
            if type(msg) is m.Sync:  # the other message of every extended-protocol run
                self.in_extended_block = True
                await self._sync()
                return True
            return await self._handle_other(msg)
        # Parse, Bind, Describe, Execute, Close: found by type in one lookup (the chain
        # below costs a prepared statement's four messages a visible share of its time).
        self.in_extended_block = True
        if self.skip_until_sync:
            return True
        return await self._run_step(step, msg)

    async def _run_step(self, step: _Step, msg: m.FrontendMessage) -> bool:
        try:
            await step(self, msg)
        except (ProtocolViolation, FatalError):  # these end the connection
            raise
        except PgError as exc:
            await self._step_failed(exc)
        except Exception as exc:  # a bug must cost one statement, not the connection
            log.exception("internal error")
            await self._step_failed(internal_error(exc))
        return True

    async def _step_failed(self, error: PgError) -> None:
        """An extended-protocol step failed: the error, then skip to the next Sync."""
        self._log_failure(error)
        self.send_error(error)
        self.skip_until_sync = True
        await self.runner.statement_failed()

    async def _handle_other(self, msg: m.FrontendMessage) -> bool:
        if isinstance(msg, m.Terminate):
            return False
        if isinstance(msg, (m.Malformed, m.FunctionCall)):
            await self._reject(msg)
            return True
        self.in_extended_block = not isinstance(msg, m.Query)
        if isinstance(msg, m.Query):
            await self._simple_query(msg.sql)
            return True
        if isinstance(msg, m.Sync):
            await self._sync()
            return True
        if isinstance(msg, m.Flush):
            await self.flush()
            return True
        if isinstance(msg, (m.CopyData, m.CopyDone, m.CopyFail)):
            return True  # stray copy messages after a failed COPY are ignored, as in Postgres
        if self.skip_until_sync:
            return True
        step = next((f for t, f in _EXTENDED_STEPS.items() if isinstance(msg, t)), None)
        if step is None:  # PasswordData after login: Postgres knows no 'p' message then
            raise ProtocolViolation(f"invalid frontend message type {ord('p')}")
        return await self._run_step(step, msg)

    async def _reject(self, msg: m.Malformed | m.FunctionCall) -> None:
        """A framed message Postgres answers with an ERROR: bad content, or fastpath calls.

        As in Postgres, Query, FunctionCall and Sync end with ReadyForQuery; other
        extended-protocol messages skip to the next Sync; copy messages are ignored.
        """
        if isinstance(msg, m.FunctionCall):
            tag, error = "F", PgError("0A000", "fastpath function calls are not supported")
        else:
            tag, error = msg.tag, msg.error
        if tag in ("d", "c", "f"):
            return
        if tag not in ("Q", "F", "S") and self.skip_until_sync:
            return
        self.statement_sql = None
        self._log_failure(error)
        self.send_error(error)
        await self.runner.statement_failed()
        if tag == "S":
            await self._sync()
        elif tag in ("Q", "F"):
            self._ready()
            await self.flush()
        else:
            self.skip_until_sync = True

    def send_error(self, exc: PgError) -> None:
        self.out(m.error_response(exc.fields()))

    def send_notice(self, message: str, sqlstate: str = "00000", severity: str = "NOTICE") -> None:
        self.out(m.notice_response({"S": severity, "V": severity, "C": sqlstate, "M": message}))

    # --- simple query ----------------------------------------------------------

    async def _simple_query(self, sql: str) -> None:
        self.activity.running(sql)
        self.statement_sql = sql
        started = time.monotonic()
        level = self.settings.values.get("log_statement", "none")
        logged = level == "all"  # logged before it is parsed, as PostgreSQL does
        if logged:
            statement_log.statement(self.log_who(), sql)
        try:
            pieces, implicit = message_pieces(sql) or ([(0, sql)], False)
            if implicit := implicit and self.runner.txn_status == "I":
                await self.runner.begin_implicit()
            for start, piece in pieces:
                with sql_prepared.piece_of(start, piece):
                    logged = await self._query_text(piece, logged, level)
            if implicit:
                await self.runner.end_implicit()
        except (ProtocolViolation, FatalError):  # these end the connection
            raise
        except PgError as exc:
            self._log_failure(exc)
            self.send_error(exc)
            await self.runner.statement_failed()
        except Exception as exc:  # a bug must cost one statement, not the connection
            log.exception("internal error")
            self._log_failure(internal_error(exc))
            self.send_error(internal_error(exc))
            await self.runner.statement_failed()
        else:
            self._log_duration(started, sql, None, logged)
        self.portals.pop("", None)
        self.prepared.pop("", None)
        self._ready()
        await self.flush()

    async def _query_text(self, sql: str, logged: bool, level: str) -> bool:
        """Run a simple Query's text (or a piece: message_pieces); True once it is logged."""
        answered = False
        if sql_prepared.maybe_prepared(sql):
            answered = sql_prepared.prepare(
                self.sql_prepared, sql, lambda body: self.transpile_sql(body, None)
            )
            if answered:
                self.out(m.command_complete("PREPARE"))
            else:
                sql = sql_prepared.execute_text(self.sql_prepared, sql) or sql
        # what runs: with the BEFORE ROW triggers it fires (the log shows `sql`)
        run = sql if answered else await triggers.prepare(self.runner, sql)
        hints = None if answered else await column_hints.ready(self.runner, run)
        statements = () if answered else self.transpile_sql(run, hints)
        if not logged and statement_log.selects(level, statements):
            logged = True
            statement_log.statement(self.log_who(), sql)
        if not statements and not answered:
            self.out(m.empty_query_response())
        implicit = len(statements) > 1 and self.runner.txn_status == "I"
        implicit = implicit and not self.runner.implicit
        for st in statements:
            if implicit and st.kind in ("begin", "commit", "rollback"):
                implicit = False
        if implicit:
            await self.runner.begin_implicit()
        ddl_ran = False  # since the statements were transpiled
        for i in range(len(statements)):
            if ddl_ran and statements[i].kind in _HINTED and hints is not None:
                statements, ddl_ran = await self._after_ddl(sql, statements), False
            portal = Portal(statements[i], [], (), sql=sql)
            await self.runner.execute(portal, self, max_rows=0, describe=True)
            ddl_ran = ddl_ran or (statements[i].kind == "ddl" and len(statements) <= _AGAIN)
        if implicit:
            await self.runner.end_implicit()
        return logged

    async def _after_ddl(
        self, sql: str, statements: tuple[Statement, ...]
    ) -> tuple[Statement, ...]:
        """The message's statements transpiled again after one of them ran DDL: the later
        ones read the tables as they are now (a table made just before, its identity
        columns), as the hints of the transaction's own catalog say (column_hints.ready)."""
        again = self.transpile_sql(sql, await column_hints.ready(self.runner, sql))
        return again if len(again) == len(statements) else statements

    def _log_duration(self, started: float, sql: str, portal: str | None, logged: bool) -> None:
        setting = self.settings.values.get("log_min_duration_statement", "-1")
        if setting != "-1":
            ms = (time.monotonic() - started) * 1000
            statement_log.slow(self.log_who(), setting, ms, sql, portal, logged)

    async def _sync(self) -> None:
        self.skip_until_sync = False
        try:
            await self.runner.sync()
        except PgError as exc:
            self._log_failure(exc)
            self.send_error(exc)
        self.portals.pop("", None)
        self._ready()
        await self.flush()

    def _ready(self) -> None:
        """ReadyForQuery; pg_stat_activity then shows the session idle."""
        status = self.runner.txn_status
        self.idle = status == "I"
        if self.idle:
            notify = self.runner.notify
            notify.commit()  # an autocommit statement's (block ends commit theirs)
            for message in notify.messages():  # before ReadyForQuery, as PostgreSQL
                self.out(message)
        self.activity.ready(status)
        self.out(m.ready_for_query(status))

    # --- session-level utilities used by the runner -----------------------------

    def discard_all(self) -> None:
        self.prepared.clear()
        self.sql_prepared.clear()
        for portal in self.portals.values():
            self.runner.close_portal(portal)
        self.portals.clear()

    def close(self) -> None:
        self.discard_all()


# The extended-protocol steps `Session.handle` finds by the message's exact type.
_EXTENDED_STEPS: dict[type, _Step] = {
    m.Parse: Session._parse,
    m.Bind: Session._bind,
    m.Describe: Session._describe,
    m.Execute: Session._execute,
    m.Close: Session._close_step,
}
