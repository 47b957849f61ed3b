"""The extended query protocol's steps (Parse, Bind, Describe, Execute, Close) of a
session: a mixin of Session (session.py), which dispatches the messages to them."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from proxy.pgserver import sql_prepared, statement_log, statement_parts, triggers
from proxy.pgserver.portal import Portal, Prepared
from proxy.pgserver.results import row_description
from proxy.semantic import column_hints
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import explicit_param_casts
from transpiler.indeterminate_params import untyped_param

if TYPE_CHECKING:
    from proxy.db.backends import Activity
    from proxy.db.settings import SessionSettings
    from proxy.pgserver.runner import Runner
    from proxy.pgserver.sql_cursors import CursorSet
    from transpiler import ColumnHints, Statement

_EXPLICIT_OIDS = {"OID[]": 1028, "NUMERIC": 1700, "VECTOR": 16400}


class ExtendedSteps:
    """Session's extended-protocol steps; the attributes are Session's."""

    runner: Runner
    settings: SessionSettings
    prepared: dict[str, Prepared]
    sql_prepared: sql_prepared.SqlPrepared
    portals: dict[str, Portal]
    sql_cursors: CursorSet
    activity: Activity
    statement_sql: str | None

    out: Callable[[bytes], None]

    def transpile_sql(self, sql: str, hints: ColumnHints | None) -> tuple[Statement, ...]: ...

    def log_who(self) -> statement_log.Who: ...

    def _log_duration(self, started: float, sql: str, portal: str | None, logged: bool) -> None: ...

    async def _parse(self, msg: m.Parse) -> None:
        if msg.name and msg.name in self.prepared:
            raise PgError("42P05", f'prepared statement "{msg.name}" already exists')
        sql = self.statement_sql = msg.sql
        if sql_prepared.maybe_prepared(sql):
            sql = sql_prepared.extended_text(self.sql_prepared, sql)
        sql = await triggers.prepare(self.runner, sql)  # BEFORE ROW triggers it fires
        hints = await column_hints.ready(self.runner, sql)
        parts, st = statement_parts.split(self.transpile_sql(sql, hints))
        oids = list(msg.param_oids)
        if st is not None:
            count = max(st.param_count, len(oids))
            oids += [0] * (count - len(oids))
            for n, pg_type in explicit_param_casts(msg.sql).items():
                if 0 < n <= len(oids) and oids[n - 1] == 0:
                    oids[n - 1] = _EXPLICIT_OIDS[pg_type]
            if (n := untyped_param(msg.sql, oids)) is not None:
                raise PgError("42P18", f"could not determine data type of parameter ${n}")
            if 0 in oids:
                oids = await self.runner.infer_param_oids(st, oids)
        self.prepared[msg.name] = Prepared(msg.sql, st, oids, parts=parts)
        self.out(m.parse_complete())

    def _get_prepared(self, name: str) -> Prepared:
        prepared = self.prepared.get(name)
        if prepared is None:
            raise PgError("26000", f'prepared statement "{name}" does not exist')
        return prepared

    async def _bind(self, msg: m.Bind) -> None:
        self.statement_sql = None
        prepared = self._get_prepared(msg.statement)
        self.statement_sql = prepared.sql
        if msg.portal and msg.portal in self.portals:
            raise PgError("42P03", f'cursor "{msg.portal}" already exists')
        n = len(prepared.param_oids)
        if len(msg.params) != n:
            raise PgError(
                "08P01",
                f"bind message supplies {len(msg.params)} parameters, "
                f"but prepared statement requires {n}",
            )
        fmts = msg.param_formats
        if len(fmts) not in (0, 1, n):
            raise PgError("08P01", f"bind message has {len(fmts)} parameter formats for {n}")
        params = self.runner.decode_params(prepared.param_oids, fmts, msg.params, msg.portal)
        old = self.portals.pop(msg.portal, None)
        if old is not None:
            self.runner.close_portal(old)
        self.portals[msg.portal] = Portal(
            prepared.statement, params, msg.result_formats, sql=prepared.sql, prepared=prepared
        )
        self.activity.running(prepared.sql)  # Describe may run it already
        self.out(m.bind_complete())

    async def _describe(self, msg: m.Describe) -> None:
        self.statement_sql = None
        if msg.kind == "S":
            prepared = self._get_prepared(msg.name)
            self.statement_sql = prepared.sql
            self.out(m.parameter_description(prepared.param_oids))
            if not prepared.described:
                prepared.columns = await self.runner.describe_statement(
                    prepared.statement, prepared.param_oids, self
                )
                prepared.described = True
            if prepared.columns:
                self.out(row_description(prepared.columns))
            else:
                self.out(m.no_data())
            return
        portal = self.portals.get(msg.name)
        if portal is not None:
            self.statement_sql = portal.sql
        if portal is None:
            # A DECLAREd cursor is a portal too (psycopg describes its server cursors).
            declared = self.sql_cursors.by_name.get(msg.name)
            if declared is None:
                raise PgError("34000", f'portal "{msg.name}" does not exist')
            self.out(row_description(declared.columns, (1,) if declared.binary else ()))
            return
        await self.runner.describe_portal(portal, self)

    async def _execute(self, msg: m.Execute) -> None:
        portal = self.portals.get(msg.portal)
        self.statement_sql = None
        if portal is None:
            raise PgError("34000", f'portal "{msg.portal}" does not exist')
        self.statement_sql = portal.sql
        if portal.statement is None:
            self.out(m.empty_query_response())
            return
        self.activity.running(portal.sql)
        started = time.monotonic()
        values = self.settings.values
        level = values.get("log_statement", "none")
        # The prepared statement's name, looked up only when a log line may name it.
        name = (
            self._prepared_name(portal)
            if level != "none" or values.get("log_min_duration_statement", "-1") != "-1"
            else None
        )
        # Logged at its first Execute (Describe may have run it already).
        logged = (
            level != "none"
            and not portal.logged
            and statement_log.selects(level, (portal.statement,))
        )
        portal.logged = True
        if logged:
            statement_log.statement(self.log_who(), portal.sql, name or "")
        parts = portal.prepared.parts if portal.prepared is not None else ()
        if parts and not portal.executed:
            await statement_parts.run(self.runner, self, portal, parts, max(msg.max_rows, 0))
        else:
            await self.runner.execute(portal, self, max_rows=max(msg.max_rows, 0), describe=False)
        if self.settings.values.get("log_min_duration_statement", "-1") != "-1":
            if name is None:
                name = self._prepared_name(portal)  # the statement itself turned the log on
            self._log_duration(started, portal.sql, name, logged)

    def _prepared_name(self, portal: Portal) -> str:
        """The name of the prepared statement a portal runs ('' unnamed), for the log."""
        return next((k for k, v in self.prepared.items() if v is portal.prepared), "")

    async def _close_step(self, msg: m.Close) -> None:
        self._close(msg)

    def _close(self, msg: m.Close) -> None:
        if msg.kind == "S":
            self.prepared.pop(msg.name, None)
        else:
            portal = self.portals.pop(msg.name, None)
            if portal is not None:
                self.runner.close_portal(portal)
        self.out(m.close_complete())
