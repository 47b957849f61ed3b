"""Domains against a real server (proxy/pgserver/domains.py; PostgreSQL's answers:
tests/differential/cases/domains.sql): PostgreSQL's SQLSTATEs and words, COPY FROM,
parameters, the base type's OID in RowDescription, ROLLBACK, savepoints, notices, and a
restart of a database file."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server

SCHEMA = (
    "CREATE DOMAIN email AS text CHECK (VALUE ~ '@')",
    "CREATE DOMAIN posint AS integer NOT NULL DEFAULT 1 CONSTRAINT pos CHECK (VALUE > 0)",
    "CREATE TABLE users (id int PRIMARY KEY, e email, p posint)",
)


def _conn(server: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(
        host=server.host, port=server.port, user="x", dbname="hatidata", autocommit=True
    )


def _error(conn: psycopg.Connection, sql: str, params: tuple = ()) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql, params or None)
    return info.value


def test_errors_copy_parameters_and_row_description(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        with _conn(srv) as conn:
            for sql in SCHEMA:
                conn.execute(sql)
            err = _error(conn, "INSERT INTO users (id, e) VALUES (1, 'nope')")
            assert err.sqlstate == "23514"
            assert err.diag.message_primary == (
                'value for domain email violates check constraint "email_check"'
            )
            err = _error(conn, "INSERT INTO users (id, e, p) VALUES (1, 'a@b', NULL)")
            assert err.sqlstate == "23502"
            assert err.diag.message_primary == "domain posint does not allow null values"
            # a parameter (extended protocol) is checked as a literal is
            err = _error(conn, "INSERT INTO users (id, e, p) VALUES (%s, %s, %s)", (1, "a@b", -4))
            assert err.diag.message_primary == (
                'value for domain posint violates check constraint "pos"'
            )
            conn.execute("INSERT INTO users (id, e) VALUES (%s, %s)", (1, "a@b"))
            # COPY FROM: the same checks
            with (
                pytest.raises(psycopg.errors.CheckViolation),
                conn.cursor() as cur,
                cur.copy("COPY users (id, e, p) FROM STDIN") as copy,
            ):
                copy.write_row((2, "c@d", 3))
                copy.write_row((3, "bad", 3))
            with conn.cursor() as cur, cur.copy("COPY users (id, e) FROM STDIN") as copy:
                copy.write_row((4, "e@f"))
            rows = conn.execute("SELECT id, e, p FROM users ORDER BY id").fetchall()
            assert rows == [(1, "a@b", 1), (4, "e@f", 1)]  # the domain's DEFAULT
            # RowDescription: the base type's OID, as PostgreSQL sends it
            cur = conn.execute("SELECT e, p, 'x@y'::email AS c FROM users LIMIT 1")
            assert [d.type_code for d in cur.description] == [25, 23, 25]
            err = _error(conn, "SELECT %s::posint", (0,))
            assert err.sqlstate == "23514"
    finally:
        srv.stop()


def test_rollback_savepoints_and_notices(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        with _conn(srv) as conn:
            notices: list[str] = []
            conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
            for sql in SCHEMA:
                conn.execute(sql)
            conn.execute("INSERT INTO users (id, e) VALUES (1, 'abc@d')")
            with pytest.raises(psycopg.errors.DivisionByZero), conn.transaction():
                conn.execute("ALTER DOMAIN email ADD CONSTRAINT long CHECK (length(VALUE) > 2)")
                conn.execute("SELECT 1 / 0")
            with pytest.raises(psycopg.errors.DivisionByZero), conn.transaction():
                conn.execute("CREATE DOMAIN gone AS int")
                conn.execute("SELECT 1 / 0")
            count = (
                "SELECT (SELECT count(*) FROM pg_type WHERE typname = 'gone')"
                " + (SELECT count(*) FROM pg_constraint WHERE conname = 'long')"
            )
            assert conn.execute(count).fetchone() == (0,)
            conn.execute("INSERT INTO users (id, e) VALUES (2, 'a@')")  # no length check
            conn.execute("BEGIN")
            conn.execute("ALTER DOMAIN posint SET DEFAULT 5")
            conn.execute("SAVEPOINT s")
            conn.execute("INSERT INTO users (id, e) VALUES (3, 'x@y')")
            err = _error(conn, "ROLLBACK TO SAVEPOINT s")  # the replay cannot redo it
            assert "ALTER DOMAIN" in str(err)
            conn.execute("ROLLBACK")
            assert conn.execute(
                "SELECT typdefault FROM pg_type WHERE typname = 'posint'"
            ).fetchone() == ("1",)
            conn.execute("DROP DOMAIN IF EXISTS nothing_here")
            conn.execute("ALTER DOMAIN email DROP CONSTRAINT IF EXISTS nothing_here")
            assert notices == [
                'type "nothing_here" does not exist, skipping',
                'constraint "nothing_here" of domain "email" does not exist, skipping',
            ]
            err = _error(conn, "DROP DOMAIN email")
            assert err.sqlstate == "2BP01"
            assert err.diag.message_detail == "column e of table users depends on type email"
            conn.execute("DROP DOMAIN email CASCADE")
            assert notices[-1] == "drop cascades to column e of table users"
            assert [d.name for d in conn.execute("SELECT * FROM users").description] == ["id", "p"]
    finally:
        srv.stop()


def test_domains_are_kept_by_a_database_file(tmp_path: Path) -> None:
    srv = start_server(tmp_path)
    try:
        with _conn(srv) as conn:
            for sql in SCHEMA:
                conn.execute(sql)
    finally:
        srv.stop()
    srv = start_server(tmp_path)  # the same data directory, opened again
    try:
        with _conn(srv) as conn:
            err = _error(conn, "INSERT INTO users (id, e) VALUES (1, 'nope')")
            assert err.sqlstate == "23514"
            err = _error(conn, "SELECT 'nope'::email")
            assert err.sqlstate == "23514"
            conn.execute("INSERT INTO users (id, e) VALUES (1, 'a@b')")
            assert conn.execute("SELECT p FROM users").fetchone() == (1,)
            row = conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = 'users'::regclass AND attname = 'e'"
            ).fetchone()
            assert row == ("email",)
    finally:
        srv.stop()
