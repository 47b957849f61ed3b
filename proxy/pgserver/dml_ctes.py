"""Data-modifying statements in WITH (transpiler/dml_cte.py's steps), run all or nothing.

Each DML CTE is transpiled, checked (sql_policy) and run through the normal statement
path (Runner.execute: ownership, foreign keys, logging), its output unsent; its RETURNING
rows go to the connection's temp table the transpiler named. Then the main statement,
whose DML CTEs read those tables, runs as the client's statement: its rows, its command
tag. A later Execute of a suspended portal resumes the main statement alone.

Outside a transaction block the statement is its own transaction: an error in any part
rolls all of it back. Inside one, an error fails the block (25P02 until its end), as any
failed statement there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.access import stored_sql
from proxy.pgserver.portal import Portal
from proxy.pgserver.result_shape import returns_rows
from proxy.pgserver.results import Column
from proxy.semantic import column_hints
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import Statement
from transpiler.model import DmlCte

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession as Session
    from proxy.pgserver.contexts import StatementRunner as Runner

# Result types as described to clients, back to the DuckDB types a table column takes.
_DUCKDB_TYPES = {
    "JSONB": "JSON",
    "JSONB[]": "JSON[]",
    "NAME": "VARCHAR",
    "NAME[]": "VARCHAR[]",
    "OID": "BIGINT",
    "OID[]": "BIGINT[]",
}


async def run(
    runner: Runner, session: Session, portal: Portal, max_rows: int, describe: bool
) -> None:
    st = portal.statement
    assert st is not None and isinstance(st.command, DmlCte)
    cte = st.command
    if runner.txn_status == "E":
        raise PgError(
            "25P02",
            "current transaction is aborted, commands ignored until end of transaction block",
        )
    # All parts transpiled (and checked) before any runs.
    steps = [(step, await _compile(runner, session, step.sql)) for step in cte.steps]
    main = await _compile(runner, session, cte.main)
    _check_stored_reads(cte)
    own = runner.txn_status == "I" and not runner.implicit
    if own:
        await runner.begin_implicit()
    try:
        for step, sub_st in steps:
            sub = Portal(sub_st, pick(portal.params, step.params), (), sql=sub_st.sql)
            sub.keep_rows = step.relation
            await quietly(runner, session, sub)
        portal.statement = main  # a later Execute of a suspended portal resumes it
        portal.params = pick(portal.params, cte.main_params)
        await runner.execute(portal, session, max_rows=max_rows, describe=describe)
    except PgError:
        if own:
            await runner.statement_failed()  # rolls every part back
        raise
    if portal.done or portal.columns is None:
        relations = [s.relation for s in cte.steps if s.relation is not None]
        await runner.call(_drop, runner.cursor, relations)
        if own:
            await runner.end_implicit()
    # else: suspended; the block ends at Sync, the temp tables go with the next use


async def describe(
    runner: Runner, session: Session, st: Statement, param_oids: Sequence[int]
) -> tuple[Column, ...] | None:
    """The main statement's columns, its DML CTEs typed by their RETURNING lists: nothing
    runs."""
    cte = st.command
    assert isinstance(cte, DmlCte)
    shape = await _compile(runner, session, cte.describe)
    if not returns_rows(shape):
        return None
    oids = [param_oids[n - 1] if n <= len(param_oids) else 0 for n in cte.describe_params]
    return await runner.describe_statement(shape, oids)


def _check_stored_reads(cte: DmlCte) -> None:
    """0A000 when a part reads, through a view or macro, a table an earlier DML CTE
    modified (the transpiler saw the tables the statement names itself)."""
    modified: dict[str, str] = {}
    parts = [(f'WITH query "{s.name}"', s.sql, s.target, s.name) for s in cte.steps]
    parts.append(("the main statement", cte.main, "", ""))
    for where, sql, target, name in parts:
        if modified:
            for d in stored_sql.through(stored_sql.words_of(sql)):
                hit = sorted(stored_sql.words_of(d.query) & modified.keys())
                if hit:
                    raise PgError(
                        "0A000",
                        f'table "{hit[0]}" is modified by WITH query "{modified[hit[0]]}" and '
                        f"read through {d.kind} {d.name} by {where} of the same statement: "
                        "hatiproxy runs the data-modifying WITH queries one after another, so "
                        "it would see the changes PostgreSQL hides from it; this is not "
                        "supported",
                    )
        if target:
            modified.setdefault(target, name)


def pick(params: Sequence[Any], numbers: Sequence[int]) -> list[Any]:
    """The parameters a part uses (`numbers`: the statement's $n, in the part's order)."""
    return [params[n - 1] if n <= len(params) else None for n in numbers]


async def keep(runner: Runner, portal: Portal, session: Session) -> None:
    """A DML CTE that ran: its RETURNING rows (read as Arrow: every type exact) into its
    temp table."""
    name = portal.keep_rows
    assert name is not None
    rows, portal.kept = portal.kept, None
    if rows is None and (portal.buffered or not portal.drained):  # never drop rows silently
        raise PgError("XX000", "the RETURNING rows of a data-modifying WITH query were not kept")
    n = await runner.call(_store, runner.cursor, name, portal.columns or (), rows)
    portal.buffered, portal.drained, portal.done = None, True, True
    runner.close_portal(portal)
    st = portal.statement
    assert st is not None
    session.out(m.command_complete(f"{st.tag} {n}"))


def _store(cur: duckdb.DuckDBPyConnection, name: str, cols: Sequence[Column], rows: Any) -> int:
    names = _unique([c.name for c in cols])
    defs = ", ".join(
        f"{_quote(n)} {_DUCKDB_TYPES.get(c.duckdb_type, c.duckdb_type)}"
        for n, c in zip(names, cols, strict=True)
    )
    cur.execute(f"CREATE OR REPLACE TEMP TABLE {_quote(name)} ({defs})")
    if rows is None or not rows.num_rows:
        return 0
    view = "__hati_cte_rows"  # the cursor's own name for the Arrow table, for this INSERT
    cur.register(view, rows)
    try:
        cur.execute(f"INSERT INTO temp.main.{_quote(name)} SELECT * FROM {view}")
    finally:
        cur.unregister(view)
    return int(rows.num_rows)


def _drop(cur: duckdb.DuckDBPyConnection, relations: list[str]) -> None:
    for name in relations:
        cur.execute(f"DROP TABLE IF EXISTS temp.main.{_quote(name)}")


def _unique(names: list[str]) -> list[str]:
    """Column names of a table are unique (`RETURNING id, id`: id, id_1)."""
    seen: set[str] = set()
    out = []
    for n in names:
        cand, i = n, 0
        while cand.lower() in seen:
            i += 1
            cand = f"{n}_{i}"
        seen.add(cand.lower())
        out.append(cand)
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


async def _compile(runner: Runner, session: Session, text: str) -> Statement:
    statements = session.transpile_sql(text, await column_hints.ready(runner, text))
    if len(statements) != 1 or statements[0].command is not None:
        raise PgError("0A000", "this statement in a data-modifying WITH is not supported")
    return statements[0]


async def quietly(runner: Runner, session: Session, portal: Portal) -> None:
    """Run a statement the server made with its output unsent (NOTICEs pass): a DML
    CTE here, an AFTER trigger's step (after_triggers.py)."""
    out = session.out

    def notices_only(data: bytes | memoryview) -> None:
        if isinstance(data, bytes) and data[:1] == b"N":
            out(data)

    session.out = notices_only
    try:
        await runner.execute(portal, session, max_rows=0, describe=False)
    finally:
        session.out = out
