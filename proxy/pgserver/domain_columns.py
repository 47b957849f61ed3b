"""Table columns of a domain type, in CREATE TABLE and ALTER TABLE ADD COLUMN (the
domain's DDL: proxy/pgserver/domains.py).

DuckDB knows such a column by its base type; the column gets the domain's table CHECK
(transpiler/domains.column_check) and, when it has no DEFAULT of its own, the domain's.
CREATE TABLE: the CHECKs go into the statement, the DEFAULTs follow as ALTERs. ADD
COLUMN: the column is added with the domain's DEFAULT (so existing rows take it, as in
PostgreSQL), then the table is re-created with its CHECK, which checks those rows.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.pgserver import alter_rebuild, constraint_ddl
from proxy.pgserver.domains import DOMAINS, column_check_for, find
from proxy.wire import messages as m
from transpiler.alter_type import quote
from transpiler.domains import add_table_checks, added_column, domain_columns

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

_CREATE_TABLE = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:TEMP|TEMPORARY)\s+)?TABLE\s", re.I)
_TABLE_NAME = re.compile(
    r"\S+(?:\s+OR\s+REPLACE)?(?:\s+TEMP\w*)?\s+TABLE\s+(.+?)\s*\(", re.I | re.S
)


def _known(cur: Any) -> set[str] | None:
    """Every domain's lower-case name, bare and qualified; None when there are none."""
    try:
        rows = cur.execute(f"SELECT schema_name, name FROM {DOMAINS}").fetchall()
    except duckdb.CatalogException:  # a database without the registry
        return None
    if not rows:
        return None
    return {n.lower() for _, n in rows} | {f"{s}.{n}".lower() for s, n in rows}


def _domain(cur: Any, written: str) -> tuple[Any, ...] | None:
    parts = written.split(".")
    schema = parts[0] if len(parts) > 1 else None
    return find(cur, "main" if schema == "public" else schema, parts[-1])


def create_table_sql(cur: Any, sql: str) -> str | None:
    """`sql` (a CREATE TABLE in DuckDB's words) with the CHECKs and DEFAULTs of its
    domain columns, or None when it has none."""
    known = _known(cur)
    starts = [mt.start() for mt in _CREATE_TABLE.finditer(sql)] if known else []
    if not starts:
        return None
    head, create = sql[: starts[-1]], sql[starts[-1] :]
    checks, defaults = [], []
    for column, written, has_default in domain_columns(create, known or set()):
        row = _domain(cur, written)
        if row is None:
            continue
        checks.append(column_check_for(cur, row[0], row[1], column))
        if not has_default and row[4] is not None:
            defaults.append((column, row[4]))
    if not checks:
        return None
    out = head + add_table_checks(create, checks)
    table = _TABLE_NAME.match(create)
    if table is not None:
        for column, default in defaults:
            out += f"; ALTER TABLE {table[1]} ALTER COLUMN {quote(column)} SET DEFAULT {default}"
    return out


async def rewrite_create_table(runner: StatementRunner, portal: Portal) -> None:
    st = portal.statement
    assert st is not None
    await runner.take_cursor()
    sql = await runner.call(create_table_sql, runner.cursor, st.sql, sql=st.sql)
    if sql is not None:
        portal.statement = dataclasses.replace(st, sql=sql)


def _add_column_plan(cur: Any, sql: str) -> tuple[str, Any, str, tuple[Any, ...]] | None:
    """(the ALTER to run, its table, the column, the domain) of an ADD COLUMN of a
    domain type, else None."""
    known = _known(cur)
    found = added_column(sql, known) if known else None
    if found is None:
        return None
    table, column, written, has_default = found
    row = _domain(cur, written)
    if row is None:
        return None
    if not has_default and row[4] is not None:
        sql = f"{sql} DEFAULT {row[4]}"
    return sql, table, column, row


def _check_added(cur: Any, table_sql: Any, column: str, row: tuple[Any, ...]) -> None:
    name = alter_rebuild.TableName(table_sql.name, table_sql.db or None, table_sql.catalog or None)
    table = alter_rebuild.resolve_table(cur, name)
    if table is None:
        return
    check = f"CHECK ({column_check_for(cur, row[0], row[1], column)})"
    constraint_ddl.replace_checks(cur, table, (check,), frozenset())


async def add_column(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Carry out an ALTER TABLE ADD COLUMN of a domain type (True), else False."""
    st = portal.statement
    assert st is not None
    await runner.take_cursor()
    plan = await runner.call(_add_column_plan, runner.cursor, st.sql, sql=st.sql)
    if plan is None:
        return False
    in_block = runner.txn_status != "I" or runner.implicit
    if runner.txn_status == "I":
        runner.write.begin()  # a write that commits: the catalog snapshots must see it
    if in_block:  # a ROLLBACK TO replay cannot redo the rebuild: refused rather than lost
        session.savepoints.writes += 1
        session.savepoints.undoable.append(st.tag)
    await runner.call(_add, runner.cursor, plan, in_block, sql=plan[0])
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def _add(cur: Any, plan: tuple[str, Any, str, tuple[Any, ...]], in_block: bool) -> None:
    sql, table, column, row = plan
    with alter_rebuild.own_transaction(cur, in_block):
        cur.execute(sql)
        _check_added(cur, table, column, row)
