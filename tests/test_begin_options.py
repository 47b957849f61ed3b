"""BEGIN's transaction modes (pgx's `BeginTx`, psycopg's `Connection.transaction` with
isolation_level) are the transaction's characteristics, as SET TRANSACTION sets them."""

from __future__ import annotations

import psycopg

from tests.conftest import ServerProcess


def test_begin_options_are_the_transactions_characteristics(server: ServerProcess) -> None:
    """`BEGIN ISOLATION LEVEL ...` (pgx's BeginTx) is what SHOW reports in that
    transaction, and ends with it."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY")
        row = conn.execute("SELECT current_setting('transaction_isolation'), "
                           "current_setting('transaction_read_only')").fetchone()  # fmt: skip
        assert row == ("serializable", "on")
        conn.execute("COMMIT")
        assert conn.execute("SHOW transaction_isolation").fetchone() == ("read committed",)
