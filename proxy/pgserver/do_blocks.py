"""DO blocks (transpiler/do_block.py's subset of PL/pgSQL), run as one subtransaction.

The block's statements are transpiled, checked (sql_policy) and run one by one through
the normal statement path (Runner.execute: ownership, foreign keys, table rebuilds...);
only their CommandComplete / rows stay unsent. All of them are transpiled before any
runs, so a syntax error fails the DO before it changes anything, as PL/pgSQL compiles
the block first.

- Outside a transaction block the DO is its own transaction: all or nothing. On an
  error it rolls back; a matching handler then runs in a transaction of its own (the
  same outcome: the failed part left nothing).
- Inside a block (explicit, or several statements of one Query) it is a savepoint
  (savepoints.py): on an error with a matching handler, the block's changes are undone
  by ROLLBACK TO that savepoint, and the handler runs. An error raised before anything
  changed (the usual case: CREATE TYPE of a type that exists) leaves DuckDB's
  transaction usable and needs no undo; otherwise the savepoint emulation's rules
  apply (a replay of the transaction's earlier writes, or 0A000 when it cannot be exact).
- No handler matches: the error reaches the client with its SQLSTATE.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import duckdb

from proxy.pgserver import savepoints, sql_cursors, triggers
from proxy.pgserver.portal import Portal
from proxy.pgserver.result_shape import returns_rows
from proxy.pgserver.savepoint_log import SavepointState
from proxy.semantic import column_hints
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import Statement
from transpiler.model import DoBlock, DoHandler, TransactionCommand

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession as Session
    from proxy.pgserver.contexts import StatementRunner as Runner

# No client can name it: SQL identifiers cannot hold NUL.
_SAVEPOINT = "\x00do"


async def run(runner: Runner, session: Session, portal: Portal) -> None:
    block = portal.statement.command if portal.statement is not None else None
    assert isinstance(block, DoBlock)
    if runner.txn_status == "E":
        raise PgError(
            "25P02",
            "current transaction is aborted, commands ignored until end of transaction block",
        )
    body = await _compile(runner, session, block.statements)
    handlers = [(h, await _compile(runner, session, h.statements)) for h in block.handlers]
    if runner.txn_status == "I" and not runner.implicit:
        await _own_transaction(runner, session, block, body, handlers)
    else:
        await _subtransaction(runner, session, block, body, handlers)
    session.out(m.command_complete("DO"))


async def _compile(runner: Runner, session: Session, texts: Sequence[str]) -> list[Statement]:
    out: list[Statement] = []
    for text in texts:
        text = await triggers.prepare(runner, text)  # BEFORE ROW triggers it fires
        for st in session.transpile_sql(text, await column_hints.ready(runner, text)):
            runs_here = st.command is None or st.kind == "dml_cte"  # Runner.execute's
            if not runs_here or st.kind in ("copy", "do", "explain"):
                what = "DO" if st.kind == "do" else st.tag
                raise PgError("0A000", f"{what} in a DO block is not supported")
            if sql_cursors.is_cursor_statement(st):
                raise PgError("0A000", "cursors in a DO block are not supported")
            if returns_rows(st):  # PL/pgSQL's words: a SELECT needs INTO or PERFORM
                raise PgError(
                    "42601",
                    "query has no destination for result data",
                    hint="A DO block runs statements that return no rows (no SELECT).",
                )
            out.append(st)
    return out


async def _own_transaction(
    runner: Runner,
    session: Session,
    block: DoBlock,
    body: list[Statement],
    handlers: list[tuple[DoHandler, list[Statement]]],
) -> None:
    await runner.begin_implicit()
    failure, _ = await _attempt(runner, session, body)
    if failure is None:
        await runner.end_implicit()
        return
    await runner.statement_failed()  # rolls the block's transaction back
    handler = block.handler_for(failure.sqlstate)
    if handler is None:
        raise failure
    statements = next(sts for h, sts in handlers if h is handler)
    if statements:
        await runner.begin_implicit()
        failure, _ = await _attempt(runner, session, statements)
        if failure is not None:
            raise failure  # the session's error path rolls it back
        await runner.end_implicit()


async def _subtransaction(
    runner: Runner,
    session: Session,
    block: DoBlock,
    body: list[Statement],
    handlers: list[tuple[DoHandler, list[Statement]]],
) -> None:
    state = session.savepoints
    await savepoints.run(runner, state, TransactionCommand("savepoint", savepoint=_SAVEPOINT))
    try:
        before = state.writes
        failure, wrote = await _attempt(runner, session, body, state)
        if failure is None:
            return
        handler = block.handler_for(failure.sqlstate)
        if handler is None:
            raise failure
        aborted = await runner.call(_aborted, runner.cursor)
        try:
            await savepoints.undo_to(
                runner, state, _SAVEPOINT, clean=not aborted and wrote == before
            )
        except PgError as exc:
            if exc.sqlstate != "0A000":
                raise
            raise PgError(
                "0A000",
                f"the DO block failed ({failure.sqlstate}: {failure.message}) and its changes "
                f"cannot be undone for its exception handler: {exc.message}",
                hint=exc.hint,
            ) from None
        statements = next(sts for h, sts in handlers if h is handler)
        failure, _ = await _attempt(runner, session, statements, state)
        if failure is not None:
            raise failure
    finally:
        savepoints.forget(state, _SAVEPOINT)


async def _attempt(
    runner: Runner,
    session: Session,
    statements: list[Statement],
    state: SavepointState | None = None,
) -> tuple[PgError | None, int]:
    """Run `statements` with their output unsent (NOTICEs pass). Returns the error that
    stopped them, and the savepoint log's write count before the failed statement."""
    out = session.out

    def notices_only(data: bytes | memoryview) -> None:
        if isinstance(data, bytes) and data[:1] == b"N":
            out(data)

    session.out = notices_only
    try:
        for st in statements:
            writes = state.writes if state is not None else 0
            try:
                await runner.execute(
                    Portal(st, [], (), sql=st.sql), session, max_rows=0, describe=False
                )
            except PgError as exc:
                return exc, writes
    finally:
        session.out = out
    return None, state.writes if state is not None else 0


def _aborted(cur: duckdb.DuckDBPyConnection) -> bool:
    """Did the failed statement abort DuckDB's transaction (a constraint violation does,
    an error found before running, like a name that exists, does not)?"""
    try:
        cur.execute("SELECT 1").fetchall()
    except duckdb.TransactionException:
        return True
    return False
