"""What PHP's Doctrine DBAL / PDO send that needed the transpiler (tests/tools/test_doctrine.py
runs them end to end): a foreign key `NOT DEFERRABLE INITIALLY IMMEDIATE`, `length()` of a
bytea column."""

from __future__ import annotations

import duckdb

from proxy.db.duckdb_errors import map_duckdb_error
from transpiler.column_hints import BYTEA, ColumnHints
from transpiler.core import transpile


def test_foreign_key_not_deferrable_initially_immediate_is_kept_by_the_server() -> None:
    (st,) = transpile(
        "ALTER TABLE p ADD CONSTRAINT f FOREIGN KEY (u) REFERENCES users (id) "
        "ON DELETE CASCADE NOT DEFERRABLE INITIALLY IMMEDIATE"
    )
    assert st.constraints is not None
    (added,) = st.constraints.adds
    fk = added.foreign_key
    assert fk is not None and fk.name == "f" and fk.on_delete == "c"
    assert (fk.deferrable, fk.deferred) == (False, False)


def test_column_references_not_deferrable_then_not_null() -> None:
    (st,) = transpile("CREATE TABLE q (u INT REFERENCES users (id) NOT DEFERRABLE NOT NULL)")
    assert "NOT NULL" in st.sql and "DEFERRABLE" not in st.sql.upper()


def test_length_of_a_bytea_column_is_its_byte_count() -> None:
    hints = ColumnHints({"files": {"data": BYTEA, "body": "text"}})
    (st,) = transpile("SELECT length(data), length(f.data), length(body) FROM files f", hints=hints)
    assert st.sql.count("OCTET_LENGTH(") == 2 and "(LENGTH(body)" in st.sql


def test_duckdb_aborted_transaction_in_postgresql_words() -> None:
    err = map_duckdb_error(
        duckdb.TransactionException(
            "TransactionContext Error: Current transaction is aborted (please ROLLBACK)"
        )
    )
    assert (err.sqlstate, err.message) == (
        "25P02",
        "current transaction is aborted, commands ignored until end of transaction block",
    )
