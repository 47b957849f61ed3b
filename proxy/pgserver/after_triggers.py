"""AFTER ROW and statement-level (BEFORE / AFTER ... FOR EACH STATEMENT) triggers, run
around the INSERT / UPDATE / DELETE that fires them (BEFORE ROW triggers are rewritten
into the statement: transpiler/trigger_rewrite.py).

    BEFORE STATEMENT bodies; the statement RETURNING * into a temp table (NEW; for a
    DELETE the deleted rows, OLD; for an UPDATE whose AFTER trigger reads OLD, the
    pre-image matched by primary key: proxy/db/trigger_plan.py); then for each written
    row, in the statement's order, each AFTER ROW trigger in name order (PostgreSQL's
    event queue order); then AFTER STATEMENT bodies; then the client's answer (its
    RETURNING rows read back from the temp table, the command tag of the statement).

A body runs one step at a time, exactly as PL/pgSQL does per row: an IF's condition and
a RAISE's message are a SELECT, an INSERT / UPDATE / DELETE runs with NEW.x / OLD.x bound
to a scalar subquery over that row (transpiler/trigger_body.py), so counters hitting one
row several times add up. Every step goes through the normal statement path
(Runner.execute: the invoker's ownership and table checks, foreign keys, this table's and
other tables' triggers, to a depth of 16: 54001 beyond). All of it is one transaction:
outside a block its own (an error rolls back the row and everything the triggers wrote);
inside one, an error fails the block as any failed statement. The client sees nothing
until it all succeeded (NOTICEs pass as they come).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import duckdb
import sqlglot
from sqlglot import exp

from proxy.db import row_triggers, trigger_plan
from proxy.execution import sql_bridge
from proxy.pgserver import triggers
from proxy.pgserver.dml_ctes import quietly
from proxy.pgserver.portal import Portal
from proxy.pgserver.result_shape import command_tag
from proxy.semantic import column_hints
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import TranspileError, sequence_draws
from transpiler.dialects import POSTGRES
from transpiler.plpgsql_trigger import If, Raise, Return, Sql, Step, parse_body
from transpiler.trigger_body import bind
from transpiler.trigger_rewrite import Trigger
from transpiler.trigger_row import raise_text

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession as Session
    from proxy.pgserver.contexts import StatementRunner as Runner

KINDS = frozenset(trigger_plan.EVENTS)
MAX_DEPTH = 16
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("hati_trigger_depth", default=0)
_INSIDE: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "hati_trigger_inside", default=frozenset()
)


async def run(runner: Runner, session: Session, portal: Portal, describe: bool) -> bool:
    """Run `portal`'s statement with the AFTER / statement-level triggers it fires; False:
    it fires none (the caller runs it as usual)."""
    st = portal.statement
    if st is None or st.kind not in KINDS or portal.keep_rows is not None or portal.executed:
        return False
    if id(portal) in _INSIDE.get() or not row_triggers.may_fire(runner.engine, st.sql):
        return False
    await runner.take_cursor()
    plan = await runner.call(trigger_plan.plan, runner.cursor, st.sql, st.kind)
    if plan is None:
        return False
    if runner.txn_status == "E":
        raise PgError(
            "25P02",
            "current transaction is aborted, commands ignored until end of transaction block",
        )
    depth = _DEPTH.get()
    if depth >= MAX_DEPTH:
        raise PgError(
            "54001",
            "stack depth limit exceeded",
            hint="Triggers fire one another too deeply (hatiproxy stops at 16 levels).",
        )
    own = runner.txn_status == "I" and not runner.implicit
    if own:
        await runner.begin_implicit()
    out = session.out
    held: list[bytes] = []
    token = _DEPTH.set(depth + 1)
    cursor = runner.cursor
    if depth == 0:
        row_triggers.hold(cursor)
    try:
        session.out = _holding(out, held)
        await _fire_all(runner, session, portal, plan, describe)
    except PgError:
        session.out = out
        if own:
            await runner.statement_failed()  # rolls back the temp tables too
        else:  # (an aborted DuckDB transaction refuses even the DROP: the block's ROLLBACK)
            with contextlib.suppress(PgError):
                await runner.call(trigger_plan.drop, runner.cursor, plan)
        raise
    finally:
        session.out = out
        _DEPTH.reset(token)
        if depth == 0:
            row_triggers.release(cursor)
    await runner.call(trigger_plan.drop, runner.cursor, plan)
    if own:
        await runner.end_implicit()
    for data in held:
        out(data)
    return True


Out = Callable[[bytes | memoryview], None]


def _holding(out: Out, held: list[bytes]) -> Out:
    """The client's output held until the statement and its triggers succeeded (NOTICEs
    pass as they come, as PostgreSQL sends them)."""

    def hold(data: bytes | memoryview) -> None:
        if isinstance(data, bytes) and data[:1] == b"N":
            out(data)
        else:
            held.append(bytes(data))

    return hold


async def _fire_all(
    runner: Runner, session: Session, portal: Portal, plan: trigger_plan.Plan, describe: bool
) -> None:
    st = portal.statement
    assert st is not None
    for trigger, op in plan.before_statement:
        await _fire(runner, session, plan, trigger, None, "BEFORE", "STATEMENT", op)
    if not plan.after_row and not plan.upsert:
        inside = _INSIDE.set(_INSIDE.get() | {id(portal)})
        try:
            await runner.execute(portal, session, max_rows=0, describe=describe)
        finally:
            _INSIDE.reset(inside)
    else:
        params = sql_bridge.duckdb_params(st, portal.params) if plan.pre_sql else []
        for sql in plan.pre_sql:  # the rows before, read with the statement's parameters
            await runner.call(_execute_sql, runner.cursor, sql, params)
        main = dataclasses.replace(
            st,
            sql=plan.main_sql,
            column_names=None,
            json_outputs=None,
            name_outputs=None,
            cast_outputs=None,
            column_origins=None,
            draws=sequence_draws.draws(plan.main_sql),
        )
        sub = Portal(main, portal.params, (), sql=portal.sql)
        sub.keep_rows = plan.new_table
        await quietly(runner, session, sub)
        updated: list[bool] = []
        if plan.pre_sql:
            updated = await runner.call(trigger_plan.align_old, runner.cursor, plan)
        n, bases = await runner.call(trigger_plan.rows, runner.cursor, plan)
        for i in await runner.call(trigger_plan.order, runner.cursor, plan, n):
            if plan.upsert is not None and updated[i]:  # ON CONFLICT DO UPDATE took it
                fired, op = plan.upsert, "UPDATE"
            else:
                fired, op = plan.after_row, plan.op
            for trigger in fired:
                await _fire(runner, session, plan, trigger, (i, bases), "AFTER", "ROW", op)
        await _answer(runner, session, portal, plan, n, describe)
    for trigger, op in plan.after_statement:
        await _fire(runner, session, plan, trigger, None, "AFTER", "STATEMENT", op)


async def _answer(
    runner: Runner,
    session: Session,
    portal: Portal,
    plan: trigger_plan.Plan,
    n: int,
    describe: bool,
) -> None:
    """The client's answer: its RETURNING rows (from the temp table), the statement's tag."""
    st = portal.statement
    assert st is not None
    tag = command_tag(st, n)
    if plan.returning is None:
        session.out(m.command_complete(tag))
        return
    sql = f'SELECT {plan.returning} FROM temp.main."{plan.new_table}" AS "{plan.alias}"'
    (shown,) = session.transpile_sql(sql, await column_hints.ready(runner, sql))
    out = session.out

    def retag(data: bytes | memoryview) -> None:
        if isinstance(data, bytes) and data[:1] == b"C":
            out(m.command_complete(tag))
        else:
            out(data)

    session.out = retag
    try:
        sub = Portal(shown, [], portal.result_formats, sql=portal.sql)
        await runner.execute(sub, session, max_rows=0, describe=describe)
    finally:
        session.out = out
    portal.done = True


async def _fire(
    runner: Runner,
    session: Session,
    plan: trigger_plan.Plan,
    trigger: Trigger,
    row: tuple[int, dict[str, int]] | None,
    when: str,
    level: str,
    op: str,
) -> None:
    found = plan.found
    variables = {
        "tg_op": op,
        "tg_name": trigger.name,
        "tg_when": when,
        "tg_level": level,
        "tg_table_name": found.table,
        "tg_relname": found.table,
        "tg_table_schema": "public" if found.schema == "main" else found.schema,
    }

    def field(record: str, column: str | None) -> str:
        table = plan.new_table if record == "new" else plan.old_table
        if op == "DELETE" and record == "new" or op == "INSERT" and record == "old":
            table = None
        if table is None or row is None:
            return "NULL"
        # row i of the temp table: its rowid from the first one's (rows are stored in the
        # statement's order; uncommitted rows are numbered from a large base)
        rowid = row[1][table] + row[0]
        if column is None:
            return f'(SELECT __hati_r FROM (SELECT * FROM temp.main."{table}" WHERE rowid = {rowid}) AS __hati_r)'
        if column not in found.columns:
            raise PgError("42703", f'record "{record}" has no field "{column}"')
        quoted = '"' + column.replace('"', '""') + '"'
        return f'(SELECT {quoted} FROM temp.main."{table}" WHERE rowid = {rowid})'

    def text(sql: str) -> str:
        try:
            return bind(sql, field, variables)
        except TranspileError as exc:
            raise PgError(exc.sqlstate, exc.message) from exc

    if trigger.when is not None and not await _holds(runner, session, text(trigger.when)):
        return
    await _steps(runner, session, parse_body(trigger.body), text)


async def _steps(
    runner: Runner, session: Session, steps: tuple[Step, ...], text: Callable[[str], str]
) -> bool:
    """Run `steps`; True once a RETURN ran (the function ended)."""
    for step in steps:
        if isinstance(step, Return):
            return True
        if isinstance(step, Sql) and step.kind == "PERFORM":
            await _value(runner, session, text(step.text)[len("SELECT ") :])
        elif isinstance(step, Sql):
            await _statement(runner, session, text(step.text))
        elif isinstance(step, Raise):
            message = exp.Literal.string(step.parts[0])
            for arg, part in zip(step.args, step.parts[1:], strict=True):
                value = sqlglot.parse_one(text(arg.sql(POSTGRES)), read=POSTGRES)
                message = exp.DPipe(this=message, expression=raise_text(value))
                message = exp.DPipe(this=message, expression=exp.Literal.string(part))
            said = await _value(runner, session, message.sql(POSTGRES))
            said_text = said.decode() if said is not None else ""
            if step.level == "EXCEPTION":
                raise PgError(step.sqlstate, said_text)
            session.send_notice(said_text, step.sqlstate, step.level)
        elif isinstance(step, If):
            for cond, body in step.branches:
                if await _holds(runner, session, text(cond.sql(POSTGRES))):
                    if await _steps(runner, session, body, text):
                        return True
                    break
            else:
                if await _steps(runner, session, step.otherwise, text):
                    return True
    return False


async def _holds(runner: Runner, session: Session, condition: str) -> bool:
    return await _value(runner, session, f"COALESCE(({condition})::BOOLEAN, FALSE)") == b"t"


async def _value(runner: Runner, session: Session, expression: str) -> bytes | None:
    """The first value of `SELECT expression` (text format), run as the invoker."""
    rows = bytearray()
    out = session.out

    def keep(data: bytes | memoryview) -> None:
        if isinstance(data, bytes) and data[:1] == b"N":
            out(data)
        else:
            rows.extend(data)

    text = f"SELECT {expression}"
    statements = session.transpile_sql(text, await column_hints.ready(runner, text))
    session.out = keep
    try:
        for st in statements:
            await runner.execute(Portal(st, [], (), sql=text), session, max_rows=0, describe=False)
    finally:
        session.out = out
    return _first_value(bytes(rows))


async def _statement(runner: Runner, session: Session, sql: str) -> None:
    """A body's INSERT / UPDATE / DELETE, its own BEFORE ROW triggers applied, through
    the normal path (its AFTER ones fire there, one level deeper)."""
    sql = await triggers.prepare(runner, sql)
    for st in session.transpile_sql(sql, await column_hints.ready(runner, sql)):
        if st.command is not None or st.kind not in KINDS:
            raise PgError("0A000", f"{st.tag} in a trigger function is not supported")
        await quietly(runner, session, Portal(st, [], (), sql=sql))


def _execute_sql(cur: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> None:
    if "$" in sql and params:
        cur.execute(sql, params)
    else:
        cur.execute(sql)


def _first_value(data: bytes) -> bytes | None:
    """The first column of the first DataRow among wire messages (text format)."""
    p = 0
    while p + 5 <= len(data):
        size = int.from_bytes(data[p + 1 : p + 5], "big")
        if data[p : p + 1] == b"D" and size >= 10:
            k = int.from_bytes(data[p + 7 : p + 11], "big", signed=True)
            return None if k < 0 else data[p + 11 : p + 11 + k]
        p += 1 + size
    return None
