"""COMMENT ON SCHEMA / CONSTRAINT / EXTENSION / FUNCTION against a real server
(proxy/pgserver/object_comments.py; PostgreSQL's answers: tests/differential/cases/
object_comments.sql): kept across a restart of a database file, taken back by ROLLBACK,
and a ROLLBACK TO SAVEPOINT that would have to replay one is refused, not lossy."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server

READ = (
    "SELECT (SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace"
    " WHERE nspname = 'app'), (SELECT obj_description(oid, 'pg_constraint')"
    " FROM pg_constraint WHERE conname = 't_pos')"
)


def _conn(server: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(
        host=server.host, port=server.port, user="x", dbname="hatidata", autocommit=True
    )


def test_comments_are_kept_by_a_database_file(tmp_path: Path) -> None:
    srv = start_server(tmp_path)
    try:
        with _conn(srv) as conn:
            conn.execute("CREATE SCHEMA app")
            conn.execute("CREATE TABLE app.t (id int CONSTRAINT t_pos CHECK (id > 0))")
            conn.execute("COMMENT ON SCHEMA app IS 'kept'")
            conn.execute("COMMENT ON CONSTRAINT t_pos ON app.t IS 'positive'")
    finally:
        srv.stop()
    srv = start_server(tmp_path)  # the same data directory, opened again
    try:
        with _conn(srv) as conn:
            assert conn.execute(READ).fetchall() == [("kept", "positive")]
    finally:
        srv.stop()


def test_transactions_and_savepoints(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        with _conn(srv) as conn:
            conn.execute("CREATE SCHEMA app")
            conn.execute("CREATE TABLE app.t (id int CONSTRAINT t_pos CHECK (id > 0))")
            with conn.transaction():
                conn.execute("COMMENT ON SCHEMA app IS 'kept'")
            with pytest.raises(psycopg.errors.DivisionByZero), conn.transaction():
                conn.execute("COMMENT ON CONSTRAINT t_pos ON app.t IS 'gone'")
                conn.execute("SELECT 1 / 0")  # the block fails: nothing is kept
            assert conn.execute(READ).fetchall() == [("kept", None)]
            conn.execute("BEGIN")
            conn.execute("COMMENT ON CONSTRAINT t_pos ON app.t IS 'positive'")
            conn.execute("SAVEPOINT s")
            conn.execute("INSERT INTO app.t VALUES (1)")
            with pytest.raises(psycopg.Error) as info:
                conn.execute("ROLLBACK TO SAVEPOINT s")
            assert "COMMENT ran before the savepoint and cannot be replayed" in str(info.value)
            conn.execute("ROLLBACK")
            assert conn.execute(READ).fetchall() == [("kept", None)]
            conn.execute("COMMENT ON EXTENSION \"uuid-ossp\" IS 'uuids'")  # a built-in one
            with pytest.raises(psycopg.errors.UndefinedObject):
                conn.execute("COMMENT ON EXTENSION citext IS 'x'")
    finally:
        srv.stop()


def test_function_comments(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--database", ":memory:")
    read = "SELECT obj_description(oid, 'pg_proc') FROM pg_proc WHERE proname = 'add_one'"
    try:
        with _conn(srv) as conn:
            conn.execute("CREATE SCHEMA app")
            conn.execute(
                "CREATE FUNCTION app.add_one(x integer) RETURNS integer LANGUAGE sql"
                " AS 'SELECT x + 1'"
            )
            # as pg_dump writes it: the argument types, qualified
            conn.execute("COMMENT ON FUNCTION app.add_one(integer) IS 'adds one'")
            assert conn.execute(read).fetchall() == [("adds one",)]
            with pytest.raises(psycopg.errors.DivisionByZero), conn.transaction():
                conn.execute("COMMENT ON FUNCTION app.add_one IS 'gone'")
                conn.execute("SELECT 1 / 0")
            assert conn.execute(read).fetchall() == [("adds one",)]
            conn.execute("COMMENT ON FUNCTION app.add_one(integer) IS NULL")
            assert conn.execute(read).fetchall() == [(None,)]
            with pytest.raises(psycopg.errors.UndefinedFunction):
                conn.execute("COMMENT ON FUNCTION nope(integer) IS 'x'")
    finally:
        srv.stop()
