"""DDL statements the runner hands over whole: several DuckDB statements in one
transaction, ALTER TABLE on a view, ALTER TABLE around a table's indexes."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.pgserver import constraint_ddl

if TYPE_CHECKING:
    from transpiler import Statement

_VIEW_ONLY = "Can only modify view with ALTER VIEW statement"


def run_ddl(cur: Any, st: Statement, sql: str, own_transaction: bool) -> str:
    """Run a statement of several DuckDB statements (in a transaction of its own when
    none is open: all or nothing), or an ALTER TABLE that DuckDB wants as ALTER VIEW
    because its target is a view. Returns the SQL that ran."""
    if own_transaction:
        cur.begin()
    try:
        try:
            cur.execute(sql)
        except duckdb.CatalogException as err:
            if st.view_sql is None or _VIEW_ONLY not in str(err):
                raise
            sql = st.view_sql
            cur.execute(sql)
        if own_transaction:
            cur.commit()
    except BaseException:
        if own_transaction:
            with contextlib.suppress(duckdb.Error):
                cur.rollback()
        raise
    return sql


def alter_table(cur: Any, sql: str, own_transaction: bool) -> None:
    """An ALTER TABLE, run around the table's indexes (constraint_ddl.alter_around_indexes),
    all or nothing."""
    if own_transaction:
        cur.begin()
    try:
        constraint_ddl.alter_around_indexes(cur, sql)
        if own_transaction:
            cur.commit()
    except BaseException:
        if own_transaction:
            with contextlib.suppress(duckdb.Error):
                cur.rollback()
        raise
