"""A NOT NULL violation (23502) in PostgreSQL's words, with the ErrorResponse's table and
column fields, which drivers expose (pgx `PgError.TableName` / `ColumnName`, psycopg
`diag.table_name` / `diag.column_name`)."""

from __future__ import annotations

import duckdb
import psycopg
import pytest

from proxy.db.duckdb_errors import map_duckdb_error
from tests.conftest import ServerProcess


def test_duckdb_not_null_message_is_mapped() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE pets (id INT, name TEXT NOT NULL)")
    with pytest.raises(duckdb.Error) as raised:
        con.execute("INSERT INTO pets VALUES (1, NULL)")
    err = map_duckdb_error(raised.value)
    assert err.sqlstate == "23502"
    assert (
        err.message == 'null value in column "name" of relation "pets" violates not-null constraint'
    )
    assert (err.table_name, err.column_name) == ("pets", "name")
    assert {"t": "pets", "c": "name"}.items() <= err.fields().items()


def test_not_null_fields_reach_psycopg(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS nn_owner")
        conn.execute("CREATE TABLE nn_owner (id int PRIMARY KEY, name text NOT NULL)")
        with pytest.raises(psycopg.errors.NotNullViolation) as raised:
            conn.execute("INSERT INTO nn_owner VALUES (%s, %s)", (1, None))
        diag = raised.value.diag
        assert (diag.table_name, diag.column_name) == ("nn_owner", "name")
        assert diag.message_primary == (
            'null value in column "name" of relation "nn_owner" violates not-null constraint'
        )
