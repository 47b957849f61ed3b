"""COMMENT ON SCHEMA / CONSTRAINT / EXTENSION / DATABASE / FUNCTION against a real server
(proxy/pgserver/object_comments.py; PostgreSQL's answers: tests/differential/cases/
object_comments.sql): kept across a restart of a database file, taken back by ROLLBACK,
and a ROLLBACK TO SAVEPOINT that would have to replay one is refused, not lossy."""

from __future__ import annotations

import subprocess
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


def test_comment_on_database(tmp_path: Path) -> None:
    """COMMENT ON DATABASE (pg_dump --create writes it): pg_shdescription, shobj_description
    and psql's `\\l+` show it, a ROLLBACK takes it back, a database file keeps it, pg_dump
    --create writes it back; another database's name is 3D000, as on PostgreSQL."""
    srv = start_server(tmp_path)
    read = "SELECT shobj_description(oid, 'pg_database') FROM pg_database"
    try:
        with _conn(srv) as conn:
            conn.execute("COMMENT ON DATABASE hatidata IS 'the shop''s'")
            with pytest.raises(psycopg.errors.InvalidCatalogName):
                conn.execute("COMMENT ON DATABASE nosuch IS 'x'")
            with pytest.raises(psycopg.errors.DivisionByZero), conn.transaction():
                conn.execute("COMMENT ON DATABASE hatidata IS 'gone'")
                conn.execute("SELECT 1 / 0")
            assert conn.execute(read).fetchall() == [("the shop's",)]
            assert conn.execute(
                "SELECT objoid, classoid::regclass::text, description FROM pg_shdescription"
            ).fetchall() == [(16384, "pg_database", "the shop's")]
        out = subprocess.run(
            ["psql", srv.dsn, "-X", "-A", "-t", "-c", r"\l+"], capture_output=True, text=True
        )
        assert out.stdout.strip().endswith("|the shop's"), out.stdout + out.stderr
        dump = subprocess.run(
            ["pg_dump", "--create", "--schema-only", srv.dsn], capture_output=True, text=True
        )
        assert dump.returncode == 0, dump.stderr
        assert "COMMENT ON DATABASE hatidata IS 'the shop''s';" in dump.stdout
    finally:
        srv.stop()
    srv = start_server(tmp_path)  # the same data directory, opened again
    try:
        with _conn(srv) as conn:
            assert conn.execute(read).fetchall() == [("the shop's",)]
            conn.execute("COMMENT ON DATABASE hatidata IS NULL")
            assert conn.execute(read).fetchall() == [(None,)]
            assert conn.execute("SELECT count(*) FROM pg_shdescription").fetchone() == (0,)
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
