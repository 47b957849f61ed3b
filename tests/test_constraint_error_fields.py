"""Constraint violations carry the ErrorResponse's schema / table / column / constraint
fields, which drivers expose (pgx `PgError.TableName` / `ConstraintName` / `ColumnName`,
psycopg `diag`): a NOT NULL violation (23502) in PostgreSQL's words, a foreign key's
(23503) on either side naming the referencing table, as PostgreSQL 15 does."""

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


def test_foreign_key_fields_reach_psycopg(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS fk_pet")
        conn.execute("DROP TABLE IF EXISTS fk_owner")
        conn.execute("CREATE TABLE fk_owner (id int PRIMARY KEY)")
        conn.execute(
            "CREATE TABLE fk_pet (id int PRIMARY KEY, owner_id int REFERENCES fk_owner(id))"
        )
        conn.execute("INSERT INTO fk_owner VALUES (1)")
        conn.execute("INSERT INTO fk_pet VALUES (1, 1)")
        for sql in ("INSERT INTO fk_pet VALUES (2, 999)", "DELETE FROM fk_owner WHERE id = 1"):
            with pytest.raises(psycopg.errors.ForeignKeyViolation) as raised:
                conn.execute(sql)
            diag = raised.value.diag
            assert (diag.schema_name, diag.table_name, diag.constraint_name) == (
                "public", "fk_pet", "fk_pet_owner_id_fkey",
            ), sql  # fmt: skip
