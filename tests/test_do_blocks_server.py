"""DO blocks over the wire, beyond tests/differential/cases/do_blocks.sql (which compares
the subset's results with PostgreSQL 15): what hatiproxy refuses, and how, and the
extended protocol."""

from __future__ import annotations

import psycopg
import pytest


def test_outside_the_subset_is_0a000_naming_it(server) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="RAISE"):
            conn.execute("DO $$ BEGIN RAISE NOTICE 'hi'; END $$")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="DECLARE"):
            conn.execute("DO $$ DECLARE n int; BEGIN NULL; END $$")
        with pytest.raises(psycopg.errors.SyntaxError, match="no destination"):
            conn.execute("DO $$ BEGIN SELECT 1; END $$")  # PL/pgSQL's words
        assert conn.execute("SELECT 1").fetchone() == (1,)  # the session goes on


def test_a_compile_error_runs_nothing(server, table_name) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int)")
        with pytest.raises(psycopg.errors.SyntaxError):
            conn.execute(f"DO $$ BEGIN INSERT INTO {table_name} VALUES (1); SELEC 2; END $$")
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (0,)


def test_extended_protocol_and_a_transaction_block(server, table_name) -> None:
    with psycopg.connect(server.dsn) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        conn.commit()
        block = (
            f"DO $$ BEGIN INSERT INTO {table_name} VALUES (2); INSERT INTO {table_name} "
            "VALUES (1); EXCEPTION WHEN unique_violation THEN NULL; END $$"
        )
        conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        cur = conn.execute(block, prepare=True)  # Parse / Bind / Execute
        assert cur.statusmessage == "DO"
        conn.execute(f"INSERT INTO {table_name} VALUES (3)")
        conn.commit()
        rows = conn.execute(f"SELECT id FROM {table_name} ORDER BY id").fetchall()
        assert rows == [(1,), (3,)]  # the block's INSERT of 2 was rolled back


def test_an_undo_that_cannot_be_exact_is_refused_and_nothing_is_kept(server, table_name) -> None:
    """Several statements in one Query are one implicit transaction; a DO whose changes
    must be undone after earlier statements wrote cannot be (DuckDB has no
    subtransactions; the savepoint emulation replays only in explicit blocks)."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="subtransactions") as err:
            conn.execute(
                f"INSERT INTO {table_name} VALUES (1); DO $$ BEGIN INSERT INTO {table_name} "
                f"VALUES (2); INSERT INTO {table_name} VALUES (2); EXCEPTION WHEN "
                "unique_violation THEN NULL; END $$"
            )
        assert "the DO block failed (23505" in str(err.value)  # what it could not undo
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (0,)


def test_duplicate_type_and_schema_sqlstates(server) -> None:
    """What DO handlers catch: a type that exists is duplicate_object (42710), as in
    PostgreSQL, not duplicate_table; a schema is duplicate_schema (42P06)."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TYPE do_dup_type AS ENUM ('a')")
        conn.execute("CREATE SCHEMA do_dup_schema")
        with pytest.raises(psycopg.errors.DuplicateObject):
            conn.execute("CREATE TYPE do_dup_type AS ENUM ('a')")
        with pytest.raises(psycopg.errors.DuplicateSchema):
            conn.execute("CREATE SCHEMA do_dup_schema")
