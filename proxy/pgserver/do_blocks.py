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
- IF / ELSIF: each condition runs as `SELECT (<condition>)` through the same path when
  its turn comes (PL/pgSQL's way), and the first branch whose condition is true runs;
  NULL is false.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
from transpiler.model import DoBlock, DoHandler, DoIf, TransactionCommand, UtilityCommand

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession as Session
    from proxy.pgserver.contexts import StatementRunner as Runner

# No client can name it: SQL identifiers cannot hold NUL.
_SAVEPOINT = "\x00do"


@dataclass(frozen=True, slots=True)
class _If:
    """A compiled IF: (the condition's SELECT, or None for ELSE; the branch's items)."""

    branches: tuple[tuple[Statement | None, list[Statement | _If]], ...]


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


async def _compile(
    runner: Runner, session: Session, texts: Sequence[str | DoIf]
) -> list[Statement | _If]:
    out: list[Statement | _If] = []
    for text in texts:
        if isinstance(text, DoIf):
            out.append(_If(tuple([
                (None if cond is None else await _condition(runner, session, cond),
                 await _compile(runner, session, items))
                for cond, items in text.branches
            ])))  # fmt: skip
            continue
        text = await triggers.prepare(runner, text)  # BEFORE ROW triggers it fires
        for st in session.transpile_sql(text, await column_hints.ready(runner, text)):
            runs_here = (  # Runner.execute's (CREATE EXTENSION, LOCK: acknowledged)
                st.command is None
                or st.kind == "dml_cte"
                or (
                    isinstance(st.command, UtilityCommand)
                    and st.command.name.startswith(("create extension", "lock "))
                )
            )
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


async def _condition(runner: Runner, session: Session, condition: str) -> Statement:
    text = f"SELECT ({condition})"
    statements = session.transpile_sql(text, await column_hints.ready(runner, text))
    if len(statements) != 1 or statements[0].command is not None:
        raise PgError("42601", f"syntax error in the IF condition of a DO block: {condition}")
    return statements[0]


async def _own_transaction(
    runner: Runner,
    session: Session,
    block: DoBlock,
    body: list[Statement | _If],
    handlers: list[tuple[DoHandler, list[Statement | _If]]],
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
    body: list[Statement | _If],
    handlers: list[tuple[DoHandler, list[Statement | _If]]],
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
    statements: list[Statement | _If],
    state: SavepointState | None = None,
) -> tuple[PgError | None, int]:
    """Run `statements` with their output unsent (NOTICEs pass). Returns the error that
    stopped them, and the savepoint log's write count before the failed statement."""
    out = session.out
    rows = bytearray()  # what an IF's condition answered

    def notices_only(data: bytes | memoryview) -> None:
        if isinstance(data, bytes) and data[:1] == b"N":
            out(data)
        elif isinstance(data, (bytes, bytearray, memoryview)):
            rows.extend(data)

    async def run(items: list[Statement | _If]) -> tuple[PgError, int] | None:
        for item in items:
            writes = state.writes if state is not None else 0
            try:
                if isinstance(item, _If):
                    for test, branch in item.branches:
                        rows.clear()
                        if test is not None:
                            await _execute(runner, session, test)
                        if test is None or _first_value(bytes(rows)) == b"t":
                            failed = await run(branch)
                            if failed is not None:
                                return failed
                            break
                else:
                    await _execute(runner, session, item)
            except PgError as exc:
                return exc, writes
        return None

    session.out = notices_only
    try:
        failed = await run(statements)
    finally:
        session.out = out
    return failed or (None, state.writes if state is not None else 0)


async def _execute(runner: Runner, session: Session, st: Statement) -> None:
    await runner.execute(Portal(st, [], (), sql=st.sql), session, max_rows=0, describe=False)


def _first_value(data: bytes) -> bytes | None:
    """The first column of the first DataRow among wire messages (text format)."""
    p = 0
    while p + 5 <= len(data):
        size = int.from_bytes(data[p + 1 : p + 5], "big")
        if data[p : p + 1] == b"D" and size >= 10:
            n = int.from_bytes(data[p + 7 : p + 11], "big", signed=True)
            return None if n < 0 else data[p + 11 : p + 11 + n]
        p += 1 + size
    return None


def _aborted(cur: duckdb.DuckDBPyConnection) -> bool:
    """Did the failed statement abort DuckDB's transaction (a constraint violation does,
    an error found before running, like a name that exists, does not)?"""
    try:
        cur.execute("SELECT 1").fetchall()
    except duckdb.TransactionException:
        return True
    return False
