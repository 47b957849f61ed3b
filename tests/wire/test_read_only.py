"""Read-only transactions over the wire (proxy/pgserver/read_only.py)."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import ServerProcess


def test_psycopg_read_only_connection_refuses_writes(server: ServerProcess) -> None:
    """psycopg's `read_only` begins each transaction READ ONLY (SQLAlchemy's
    `postgresql_readonly`, replicas' safety net): writes are 25006, reads work,
    and a read-write connection still writes (proxy/pgserver/read_only.py)."""
    with psycopg.connect(server.dsn, autocommit=True) as setup:
        setup.execute("CREATE TABLE ro_app (id int)")
    with psycopg.connect(server.dsn) as conn:
        conn.read_only = True
        assert conn.execute("SELECT count(*) FROM ro_app").fetchone() == (0,)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction) as info:
            conn.execute("INSERT INTO ro_app VALUES (1)")
        assert info.value.diag.message_primary == "cannot execute INSERT in a read-only transaction"
        conn.rollback()
        conn.read_only = False
        conn.execute("INSERT INTO ro_app VALUES (2)")
        conn.commit()
    with psycopg.connect(server.dsn, autocommit=True) as check:
        assert check.execute("SELECT id FROM ro_app").fetchall() == [(2,)]
