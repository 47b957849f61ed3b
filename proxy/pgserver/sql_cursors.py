"""SQL-level cursors: DECLARE ... CURSOR FOR, FETCH, MOVE, CLOSE.

DuckDB has no cursors, so DECLARE materialises the query into a session-private
TEMP table, numbering the rows in the query's order, and FETCH / MOVE read
slices of it by that number. The position follows Postgres: 0 is before the first
row, 1..n are rows, n + 1 is after the last. Cursors without WITH HOLD end with
their transaction; WITH HOLD cursors live until CLOSE or the end of the session.
psycopg's server-side cursors (`conn.cursor(name=...)`) use exactly this.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from proxy.db.catalog import snapshot as catalog_snapshot
from proxy.pgserver.result_shape import lossless_sql, needs_cast, postgres_names
from proxy.pgserver.results import Column, check_formats, encoders_for, fetch_batch, row_description
from proxy.semantic import column_hints
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import Statement

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

CURSOR_TAGS = frozenset({"DECLARE", "FETCH", "MOVE"})
_ALL = 1 << 62  # FETCH ALL: more rows than any table has
_serial = itertools.count(1)

_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_DECLARE = re.compile(
    rf"^\s*DECLARE\s+(?P<name>{_NAME})\s+(?P<opts>(?:\w+\s+)*?)CURSOR\s+"
    r"(?:(?P<hold>WITH|WITHOUT)\s+HOLD\s+)?FOR\s+(?P<query>.*?)\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_MOVEMENT = re.compile(
    rf"^\s*(?P<verb>FETCH|MOVE)\s+(?P<dir>.*?)\s*(?:\b(?:FROM|IN)\s+)?(?P<name>{_NAME})\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)


def is_cursor_statement(st: Statement | None) -> bool:
    return st is not None and st.command is None and st.tag in CURSOR_TAGS


def _ident(text: str) -> str:
    if text.startswith('"'):
        return text[1:-1].replace('""', '"')
    return text.lower()


@dataclass
class DeclaredCursor:
    name: str
    table: str  # the TEMP table holding the rows
    columns: tuple[Column, ...]
    total: int
    hold: bool
    scroll: bool  # False for NO SCROLL: backward moves are refused
    binary: bool  # DECLARE BINARY: simple-protocol FETCH returns binary rows
    pos: int = 0


@dataclass
class CursorSet:
    """A session's declared cursors (ClientSession.sql_cursors); `in_txn` are those declared in
    the open transaction."""

    by_name: dict[str, DeclaredCursor] = field(default_factory=dict)
    in_txn: set[str] = field(default_factory=set)

    def named(self, name: str) -> DeclaredCursor:
        """The open cursor `name`, or 34000 (as Postgres)."""
        cur = self.by_name.get(name)
        if cur is None:
            raise PgError("34000", f'cursor "{name}" does not exist')
        return cur


# --- DECLARE -------------------------------------------------------------------------


async def _declare(runner: StatementRunner, session: ClientSession, portal: Portal) -> None:
    st = portal.statement
    assert st is not None
    match = _DECLARE.match(st.sql)
    if match is None:
        raise PgError("42601", "syntax error in DECLARE: expected DECLARE name CURSOR FOR query")
    name = _ident(match["name"])
    opts = match["opts"].upper().split()
    hold = (match["hold"] or "").upper() == "WITH"
    if not hold and runner.txn_status == "I" and not runner.implicit:
        raise PgError("25P01", "DECLARE CURSOR can only be used in transaction blocks")
    cursors = session.sql_cursors
    if name in cursors.by_name:
        raise PgError("42P03", f'cursor "{name}" already exists')
    hints = column_hints.for_session(runner, match["query"])  # built for the DECLARE
    inner = session.transpile_sql(match["query"], hints)
    if len(inner) != 1 or inner[0].kind != "select" or inner[0].bind_texts:
        raise PgError("42601", "DECLARE CURSOR needs a single SELECT or VALUES query")
    query = inner[0].sql
    table = f"__hati_cursor_{next(_serial)}"
    cur = runner.cursor
    params = list(portal.params)

    def materialise() -> tuple[tuple[Column, ...], int]:
        # An explicit row number: rowid is not dense inside a transaction.
        create = (
            f"CREATE TEMP TABLE {table} AS "
            f"SELECT row_number() OVER () AS __hati_rn, * FROM ({query}) AS __hati_q"
        )
        catalog_snapshot.refresh(cur, create, autocommit=False)  # a cursor over pg_class & co.
        cur.execute(create, params) if params else cur.execute(create)
        total = cur.execute(f"SELECT count(*) FROM {table}").fetchone()
        cols = cur.execute(f"DESCRIBE {table}").fetchall()
        columns = tuple(Column(c[0], c[1]) for c in cols[1:])  # without __hati_rn
        return columns, int(total[0]) if total else 0

    await runner.take_cursor()
    columns, total = await runner.call(materialise, sql=query)
    # Named as PostgreSQL names them, and jsonb where it would be (a TEMP table's
    # DESCRIBE says JSON): Django's server-side cursors decode jsonb themselves.
    columns = postgres_names(inner[0], columns) or columns
    cursors.by_name[name] = DeclaredCursor(
        name, table, columns, total, hold, scroll="NO" not in opts, binary="BINARY" in opts
    )
    if runner.txn_status != "I" or runner.implicit:
        cursors.in_txn.add(name)
    session.out(m.command_complete("DECLARE CURSOR"))


# --- FETCH / MOVE ----------------------------------------------------------------------


def _parse_direction(text: str) -> tuple[str, int]:
    """('forward'|'backward'|'absolute'|'relative', count) for a FETCH/MOVE direction."""
    words = text.upper().split()
    if not words:
        return "forward", 1

    def number(word: str) -> int:
        if word == "ALL":
            return _ALL
        try:
            return int(word)
        except ValueError:
            raise PgError("42601", f'syntax error at or near "{word}"') from None

    head = words[0]
    if head == "NEXT":
        return "forward", 1
    if head == "PRIOR":
        return "backward", 1
    if head == "FIRST":
        return "absolute", 1
    if head == "LAST":
        return "absolute", -1
    if head in ("ABSOLUTE", "RELATIVE") and len(words) == 2:
        return head.lower(), number(words[1])
    if head in ("FORWARD", "BACKWARD"):
        n = number(words[1]) if len(words) > 1 else 1
        return head.lower(), n
    if len(words) == 1:
        return "forward", number(head)
    raise PgError("42601", f'syntax error at or near "{words[0]}"')


def _plan(c: DeclaredCursor, how: str, n: int) -> tuple[list[int], int]:
    """Row numbers (1-based, in delivery order) a move returns, and the new position."""
    total, pos = c.total, c.pos
    if how == "forward" and n < 0:
        how, n = "backward", -n
    elif how == "backward" and n < 0:
        how, n = "forward", -n
    if how == "forward":
        last = min(pos + n, total)
        rows = list(range(pos + 1, last + 1))
        return rows, (total + 1 if pos + n > total else pos + n)
    if how == "backward":
        first = max(pos - n, 1)
        rows = list(range(min(pos - 1, total), first - 1, -1))
        return rows, (0 if pos - n < 1 else pos - n)
    target = n if how == "absolute" else pos + n
    if how == "absolute" and n < 0:
        target = total + n + 1
    if how == "relative" and n == 0:
        return ([pos] if 1 <= pos <= total else []), pos
    if target < 1:
        return [], 0
    if target > total:
        return [], total + 1
    return [target], target


async def _move(
    runner: StatementRunner, session: ClientSession, portal: Portal, describe: bool
) -> None:
    st = portal.statement
    assert st is not None
    match = _MOVEMENT.match(st.sql)
    if match is None:
        raise PgError("42601", f"syntax error in {st.tag}")
    verb = match["verb"].upper()
    name = _ident(match["name"])
    how, n = _parse_direction(match["dir"])
    target = session.portals.get(name)
    if name not in session.sql_cursors.by_name and target is not None:
        await _move_protocol_portal(runner, session, portal, target, verb, how, n, describe)
        return
    c = session.sql_cursors.named(name)
    backward = how == "backward" or (how in ("absolute", "relative") and n < 0)
    if backward and not c.scroll and not (how == "relative" and n == 0):
        raise PgError(
            "55000",
            "cursor can only scan forward",
            hint="Declare it with SCROLL option to enable backward scan.",
        )
    rows, new_pos = _plan(c, how, n)
    c.pos = new_pos
    if verb == "MOVE":
        session.out(m.command_complete(f"MOVE {len(rows)}"))
        return
    formats = portal.result_formats
    if describe and c.binary:
        formats = (1,)
    check_formats(formats, len(c.columns))
    if describe:
        session.out(row_description(c.columns, formats))
    if rows:
        await _send_rows(runner, session, c, rows, formats)
    session.out(m.command_complete(f"FETCH {len(rows)}"))


class _RowSink:
    """Stands in for the session while a protocol portal runs for FETCH / MOVE: keeps
    the DataRow bytes (FETCH forwards them, MOVE drops them) and swallows the
    extended-protocol framing (PortalSuspended, CommandComplete)."""

    def __init__(self, session: ClientSession) -> None:
        self._session = session
        self.rows: list[bytes | memoryview] = []

    def out(self, data: bytes | memoryview) -> None:
        if data[:1] == b"D":  # DataRow batches; everything else is framing
            self.rows.append(data)

    async def flush_if_large(self) -> None:
        return None

    def __getattr__(self, name: str) -> object:
        return getattr(self._session, name)


async def _move_protocol_portal(
    runner: StatementRunner,
    session: ClientSession,
    portal: Portal,
    target: Portal,
    verb: str,
    how: str,
    n: int,
    describe: bool,
) -> None:
    """FETCH / MOVE FORWARD on a Bind-created portal (asyncpg's Cursor.forward does
    `MOVE FORWARD n portal`). Such portals only go forward, as in Postgres."""
    if how != "forward" or n < 0:
        raise PgError("55000", "cursor can only scan forward")
    if target.statement is None or target.done:
        session.out(m.command_complete(f"{verb} 0"))
        return
    sink = _RowSink(session)
    before = target.rows_sent
    if not target.done:
        limit = 0 if n >= _ALL else n
        await runner.execute_duckdb(target, sink, limit, describe=False)  # type: ignore[arg-type]
    count = target.rows_sent - before
    if verb == "FETCH":
        cols = target.columns or ()
        formats = target.result_formats
        if describe:
            session.out(row_description(cols, formats))
        for data in sink.rows:
            session.out(data)
    session.out(m.command_complete(f"{verb} {count}"))


async def _send_rows(
    runner: StatementRunner,
    session: ClientSession,
    c: DeclaredCursor,
    rows: list[int],
    formats: tuple[int, ...],
) -> None:
    lo, hi = min(rows), max(rows)
    order = "ASC" if rows[0] <= rows[-1] else "DESC"
    sql = (
        f"SELECT * EXCLUDE (__hati_rn) FROM {c.table} "
        f"WHERE __hati_rn BETWEEN {lo} AND {hi} ORDER BY __hati_rn {order}"
    )
    if needs_cast(c.columns):
        sql = lossless_sql(sql, c.columns)
    encoders = encoders_for(c.columns, tuple(formats), *runner.settings.output_styles())
    await runner.take_cursor()
    await runner.call(runner.cursor.execute, sql, sql=sql)
    while True:
        data, n = await runner.call(fetch_batch, runner.cursor, encoders, 2000)
        if n:
            session.out(data)
            await session.flush_if_large()
        if n < 2000:
            break


# --- entry points used by the runner, the session and commands ------------------------


async def execute(
    runner: StatementRunner, session: ClientSession, portal: Portal, describe: bool
) -> None:
    st = portal.statement
    assert st is not None
    if st.tag == "DECLARE":
        await _declare(runner, session, portal)
    else:
        await _move(runner, session, portal, describe)


def describe(cursors: CursorSet, st: Statement) -> tuple[Column, ...] | None:
    """Result columns of a cursor statement: FETCH returns its cursor's rows."""
    if st.tag != "FETCH":
        return None
    match = _MOVEMENT.match(st.sql)
    if match is None:
        return None
    c = cursors.by_name.get(_ident(match["name"]))
    return c.columns if c is not None else None


async def _drop(runner: StatementRunner, cursors: CursorSet, names: list[str]) -> None:
    for name in names:
        c = cursors.by_name.pop(name, None)
        cursors.in_txn.discard(name)
        if c is not None and runner.txn_status != "E":
            sql = f"DROP TABLE IF EXISTS {c.table}"
            await runner.call(runner.cursor.execute, sql, sql=sql)


async def close(runner: StatementRunner, cursors: CursorSet, target: str) -> str:
    """CLOSE name | CLOSE ALL; `target` is the statement after CLOSE, as the parser gives it."""
    if target == "all":
        await _drop(runner, cursors, list(cursors.by_name))
        return "CLOSE CURSOR ALL"
    name = target
    if name not in cursors.by_name:
        raise PgError("34000", f'cursor "{name}" does not exist')
    await _drop(runner, cursors, [name])
    return "CLOSE CURSOR"


async def end_transaction(runner: StatementRunner, cursors: CursorSet, committed: bool) -> None:
    """Called after COMMIT / ROLLBACK: cursors without HOLD end with the transaction, and
    a rollback also takes the cursors declared in it (their TEMP tables are gone)."""
    gone = [
        name
        for name, c in cursors.by_name.items()
        if not c.hold or (not committed and name in cursors.in_txn)
    ]
    cursors.in_txn.clear()
    for name in gone:
        c = cursors.by_name.pop(name)
        if committed:  # after a rollback the TEMP table was rolled back with it
            sql = f"DROP TABLE IF EXISTS {c.table}"
            with contextlib.suppress(PgError):  # it may be gone with the transaction
                await runner.call(runner.cursor.execute, sql, sql=sql)
