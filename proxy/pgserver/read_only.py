"""Read-only transactions, as PostgreSQL enforces them (`BEGIN READ ONLY`, `SET
TRANSACTION READ ONLY`, `default_transaction_read_only`; psycopg's `read_only`,
SQLAlchemy's `postgresql_readonly`): INSERT, UPDATE, DELETE, MERGE and COPY FROM into a
table that is not temporary, and every DDL statement, are 25006. DuckDB has no such mode,
so before they accepted writes the client had asked to be refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from proxy.pgserver import alter_rebuild
from proxy.wire.errors import PgError
from transpiler.constraint_ddl import write_target

if TYPE_CHECKING:
    import duckdb

    from proxy.db.settings import SessionSettings
    from transpiler import Statement

_DML = ("insert", "update", "delete", "merge")


def in_effect(settings: SessionSettings, in_block: bool) -> bool:
    """Is the statement about to run in a read-only transaction? (A block takes the
    default when it begins: commands.py.)"""
    name = "transaction_read_only" if in_block else "default_transaction_read_only"
    return settings.values.get(name) == "on"


def writes(st: Statement) -> bool:
    """Might the statement write what a read-only transaction may not? (DML is checked
    for its target by `check`.)"""
    if st.kind == "ddl" or st.kind in _DML:
        return True
    return st.kind == "copy" and " FROM " in st.sql.upper() and " TO " not in st.sql.upper()


def check(cur: duckdb.DuckDBPyConnection, st: Statement) -> None:
    """25006 unless the statement only writes a temporary table."""
    if st.kind in _DML or st.kind == "copy":
        target = write_target(st.sql)
        if target is not None:
            table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(target[1], target[0]))
            if table is not None and table.temporary:
                return
    what = "COPY FROM" if st.kind == "copy" else st.tag
    raise PgError("25006", f"cannot execute {what} in a read-only transaction")
