"""DDL statements the runner hands over whole: several DuckDB statements in one
transaction, ALTER TABLE on a view, ALTER TABLE around a table's indexes, DROP TABLE with
its serial sequences."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from proxy.pgserver import alter_rebuild, constraint_ddl, sequence_restart

if TYPE_CHECKING:
    from transpiler import Statement

_VIEW_ONLY = "Can only modify view with ALTER VIEW statement"


def run_ddl(cur: Any, st: Statement, sql: str, own_transaction: bool) -> str:
    """Run a statement of several DuckDB statements (in a transaction of its own when
    none is open: all or nothing), or an ALTER TABLE that DuckDB wants as ALTER VIEW
    because its target is a view. Returns the SQL that ran."""
    with alter_rebuild.own_transaction(cur, in_block=not own_transaction):
        owned = sequence_restart.owned_sequences(cur, st.drop_owned_sequences)
        try:
            cur.execute(sql)
        except duckdb.CatalogException as err:
            if st.view_sql is None or _VIEW_ONLY not in str(err):
                raise
            sql = st.view_sql
            cur.execute(sql)
        if st.restart_identity:  # TRUNCATE ... RESTART IDENTITY
            sequence_restart.restart_identity(cur, list(st.restart_identity))
        sequence_restart.drop_unused(cur, owned)  # DROP TABLE: its serial sequences
    return sql


def alter_table(cur: Any, sql: str, own_transaction: bool) -> None:
    """An ALTER TABLE, run around the table's indexes (constraint_ddl.alter_around_indexes),
    all or nothing."""
    with alter_rebuild.own_transaction(cur, in_block=not own_transaction):
        constraint_ddl.alter_around_indexes(cur, sql)
