"""CREATE TABLE ... AS (and a materialized view's stored table): a column read plainly
from a varchar(n) column keeps its length, as PostgreSQL's does.

hatiproxy keeps varchar(n) as VARCHAR with CHECK (length(col) <= n) (the catalog reads
the length back from it: 30_relations.sql __hati_varchar_len); DuckDB's CREATE TABLE AS
copies the type without the CHECK. The query's column origins (transpiler/
column_origins.py, mapped to table oids by proxy/pgserver/column_origins.py) say which
result columns are such references; the new table is then made again with those CHECKs
(constraint_ddl.add_checks: its rows copied once, only when there are any).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import duckdb

from proxy.core.names import PG_SCHEMA
from proxy.core.sqltext import quote_ident
from proxy.pgserver import alter_rebuild, constraint_ddl
from proxy.pgserver.column_origins import OriginMap
from proxy.wire.errors import PgError
from transpiler import Statement
from transpiler.column_origins import Origins

log = logging.getLogger("hatiproxy.ctas")
BPCHAR_OID = 1042
Lengths = dict[int, tuple[int, int]]  # result column -> (type oid, n) (ctas_lengths.lengths)


def lengths(
    cur: duckdb.DuckDBPyConnection,
    origins: OriginMap,
    st: Statement,
    query_origins: Origins | None,
    path: str | None,
) -> Lengths:
    """Result column position (0-based) -> (type oid, n), for the columns that read a
    varchar(n) (1043, n), an unsized varchar (1043, 0) or a char(n) (1042, n)."""
    if not query_origins:
        return {}
    pairs = origins.prepare(cur, replace(st, kind="select", column_origins=query_origins), path)
    wanted: dict[tuple[int, int], list[int]] = {}  # a column read twice: both positions
    for i, (oid, num) in enumerate(pairs or ()):
        if oid:
            wanted.setdefault((oid, num), []).append(i)
    if not wanted:
        return {}
    oids = sorted({oid for oid, _ in wanted})
    rows = cur.execute(
        f"SELECT table_oid, attnum, typid, n FROM {PG_SCHEMA}.__hati_char_cols "
        f"WHERE table_oid IN ({', '.join('?' * len(oids))})",
        oids,
    ).fetchall()
    return {i: (t, n) for o, a, t, n in rows for i in wanted.get((o, a), ())}


def keep(cur: duckdb.DuckDBPyConnection, schema: str, name: str, found: Lengths) -> None:
    """Give the new table `schema.name` the length CHECKs of `found` (from `lengths`)."""
    if not found:
        return
    table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(name, schema or None))
    if table is None:
        return
    columns = cur.execute(
        "SELECT column_name, data_type FROM system.main.duckdb_columns() WHERE table_oid = ?"
        " ORDER BY column_index",
        [table.oid],
    ).fetchall()
    checks = tuple(
        _check(quote_ident(columns[i][0]), *kind)
        for i, kind in sorted(found.items())
        if i < len(columns) and columns[i][1] == "VARCHAR"
    )
    if checks:
        constraint_ddl.add_checks(cur, table, checks)


def _check(column: str, typid: int, n: int) -> str:
    """The CHECK transpiler/varchar_length.py gives a column of that declared type."""
    if typid == BPCHAR_OID:
        return f"CHECK (length(rtrim({column}, ' ')) <= {n})"
    return f"CHECK (length({column}) >= 0)" if n == 0 else f"CHECK (length({column}) <= {n})"


async def run(runner: Any, portal: Any, work: Any) -> None:
    """Run a CREATE TABLE ... AS (`work`: the normal path), then keep its varchar(n)
    lengths; best effort: the table stands (with text columns) if that fails."""
    await run_then_record(runner, portal, work, keep, "CREATE TABLE AS kept no varchar lengths")


async def run_then_record(
    runner: Any, portal: Any, work: Any, record: Callable[..., None], failure: str
) -> None:
    """Run the portal's CREATE ... AS (`work`), then `record(cursor, schema, name, found)`
    the declared types its columns read (`lengths`) in a transaction of its own (inside
    the client's block if there is one); best effort: the object stands if that fails,
    logged as `failure`."""
    st = portal.statement
    found: Lengths = {}
    if not portal.executed:
        await runner.take_cursor()
        path = runner.settings.values.get("search_path")
        found = await runner.call(
            lengths, runner.cursor, runner.origins, st, st.column_origins, path
        )
    await work()
    if not found or st.created_as is None:
        return
    in_block = runner.txn_status != "I" or runner.implicit

    def make() -> None:
        with alter_rebuild.own_transaction(runner.cursor, in_block):
            record(runner.cursor, *st.created_as, found)

    try:
        await runner.call(make)
    except (duckdb.Error, PgError) as exc:
        log.warning("%s: %s", failure, exc)
