"""Everyday DDL next to PostgreSQL 15, in its exact words.

- IF [NOT] EXISTS that skips an object: the NOTICE (severity, SQLSTATE, words), over the
  wire as NoticeResponse (proxy/pgserver/skip_notices.py); ADD CONSTRAINT ... USING
  INDEX's notice that the index is renamed (proxy/pgserver/constraint_names.py). psql
  shows these; Alembic, Flyway and Django's migration logs record them.
- The errors of RENAME CONSTRAINT, ADD ... USING INDEX and SET SCHEMA: SQLSTATE and
  message (tests/differential/cases/ddl_odds.sql compares the results)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_and_hatiproxy

SETUP = (
    "CREATE TABLE n_t (id int PRIMARY KEY, v text)",
    "CREATE INDEX n_t_v ON n_t (v)",
    "CREATE SCHEMA n_s",
    "CREATE TABLE n_s.n_inner (a int)",
    "CREATE SEQUENCE n_seq",
    "CREATE VIEW n_v AS SELECT 1 AS a",
    "CREATE TYPE n_mood AS ENUM ('a', 'b')",
    "CREATE TABLE n_u (id int NOT NULL, email text)",
    "CREATE UNIQUE INDEX n_u_email_idx ON n_u (email)",
    "CREATE UNIQUE INDEX n_u_id_idx ON n_u (id)",
    "CREATE TABLE n_e (id int PRIMARY KEY, code text UNIQUE, n int CHECK (n > 0), k int)",
    "CREATE INDEX n_e_k ON n_e (k)",
    "CREATE TABLE n_s.n_e (a int)",
)
CASES = [
    "CREATE TABLE IF NOT EXISTS n_t (id int)",
    "CREATE TABLE IF NOT EXISTS n_v (id int)",  # a view of the name: a relation too
    "CREATE TABLE IF NOT EXISTS n_s.n_inner (a int)",
    "CREATE TABLE IF NOT EXISTS public.n_t (id int)",
    "CREATE TABLE IF NOT EXISTS n_t (id serial PRIMARY KEY)",  # not its sequence's notice
    "CREATE TABLE IF NOT EXISTS n_t AS SELECT 1 AS a",
    "CREATE TABLE IF NOT EXISTS n_fresh (a int)",  # made: no notice
    "CREATE INDEX IF NOT EXISTS n_t_v ON n_t (v)",
    "CREATE SCHEMA IF NOT EXISTS n_s",
    "CREATE SEQUENCE IF NOT EXISTS n_seq",
    "DROP TABLE IF EXISTS n_missing",
    "DROP TABLE IF EXISTS n_missing, n_missing2",
    "DROP TABLE IF EXISTS n_s.n_missing",
    "DROP TABLE IF EXISTS n_no_schema.n_t",
    "DROP INDEX IF EXISTS n_missing_idx",
    "DROP INDEX IF EXISTS n_s.n_missing_idx",
    "DROP SCHEMA IF EXISTS n_missing_schema",
    "DROP SEQUENCE IF EXISTS n_missing_seq",
    "DROP VIEW IF EXISTS n_missing_view",
    "DROP TYPE IF EXISTS n_missing_type",
    "DROP FUNCTION IF EXISTS n_missing_fn",
    "ALTER TABLE IF EXISTS n_missing ADD COLUMN a int",
    "ALTER TABLE IF EXISTS n_missing RENAME TO n_other",
    "DROP TABLE IF EXISTS n_fresh",  # dropped: no notice
    "ALTER SEQUENCE IF EXISTS n_missing_seq RESTART WITH 5",  # skipped whole
    "CREATE SEQUENCE IF NOT EXISTS public.n_seq",
    "DROP SEQUENCE IF EXISTS public.n_missing_seq",
    'CREATE TABLE IF NOT EXISTS "N_Q" (a int)',
    'CREATE TABLE IF NOT EXISTS "N_Q" (a int)',  # the name as written
    'DROP TABLE IF EXISTS "N_Missing"',
    "DROP SCHEMA IF EXISTS n_missing_schema, n_missing_schema2",
    "DROP SEQUENCE IF EXISTS n_missing_seq, n_missing_seq2",
    "ALTER TABLE IF EXISTS n_missing RENAME CONSTRAINT a TO b",
    "ALTER TABLE IF EXISTS n_missing ADD CONSTRAINT a UNIQUE USING INDEX b",
    # the index takes the constraint's name, and PostgreSQL says so
    "ALTER TABLE n_u ADD CONSTRAINT n_u_email_uniq UNIQUE USING INDEX n_u_email_idx",
    "ALTER TABLE n_u ADD CONSTRAINT n_u_pk PRIMARY KEY USING INDEX n_u_id_idx",
]


@pytest.fixture(scope="module")
def conns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[psycopg.Connection, ...]]:
    with (
        pg_and_hatiproxy(tmp_path_factory.mktemp("notices"), list(SETUP)) as (pg_dsn, hati_dsn),
        psycopg.connect(pg_dsn, autocommit=True) as a,
        psycopg.connect(hati_dsn, autocommit=True) as b,
    ):
        yield a, b


def run(conn: psycopg.Connection, sql: str) -> tuple[object, ...]:
    """The statement's status and its notices as (severity, SQLSTATE, message)."""
    notices: list[tuple[str | None, ...]] = []

    def keep(n: psycopg.errors.Diagnostic) -> None:
        notices.append((n.severity_nonlocalized, n.sqlstate, n.message_primary))

    conn.add_notice_handler(keep)
    try:
        cur = conn.execute(sql)  # type: ignore[arg-type]  # test SQL
        return cur.statusmessage, notices
    finally:
        conn.remove_notice_handler(keep)


@pytest.mark.parametrize("sql", CASES)
def test_skipped_object_notice_as_postgres(conns: tuple[psycopg.Connection, ...], sql: str) -> None:
    pg, hati = conns
    assert run(hati, sql) == run(pg, sql)


def test_notices_in_the_extended_protocol_and_a_temp_table(
    conns: tuple[psycopg.Connection, ...],
) -> None:
    """A prepared DDL statement (psycopg's extended protocol) and a session's temporary
    table, which an unqualified DROP finds first."""
    answers = []
    for conn in conns:
        got = [run(conn, "CREATE TEMP TABLE n_tmp (a int)")]
        got.append(run(conn, "CREATE TEMP TABLE IF NOT EXISTS n_tmp (a int)"))
        got.append(run(conn, "DROP TABLE IF EXISTS n_tmp"))
        got.append(run(conn, "DROP TABLE IF EXISTS n_tmp"))
        with conn.cursor() as cur:
            notices: list[object] = []
            conn.add_notice_handler(lambda n, out=notices: out.append(n.sqlstate))
            cur.execute("DROP VIEW IF EXISTS n_missing_view2", prepare=True)
            got.append(("prepared", notices))
        answers.append(got)
    assert answers[0] == answers[1]
    assert answers[1][3][1] == [("NOTICE", "00000", 'table "n_tmp" does not exist, skipping')]


ERRORS = [
    "ALTER TABLE n_e RENAME CONSTRAINT n_e_nope TO n_e_x",
    "ALTER TABLE n_missing RENAME CONSTRAINT a TO b",
    "ALTER TABLE n_e RENAME CONSTRAINT n_e_pkey TO n_e_code_key",  # the index's name
    "ALTER TABLE n_e RENAME CONSTRAINT n_e_n_check TO n_e_code_key",
    "ALTER TABLE n_e ADD CONSTRAINT n_e_x UNIQUE USING INDEX n_e_k",
    "ALTER TABLE n_e ADD CONSTRAINT n_e_x UNIQUE USING INDEX n_e_nosuch",
    "ALTER TABLE n_missing SET SCHEMA n_s",
    "ALTER TABLE n_e SET SCHEMA n_nosuch",
    "ALTER TABLE n_e SET SCHEMA n_s",
    "ALTER SEQUENCE n_missing_seq SET SCHEMA n_s",
    "DROP TABLE n_v",  # a view: 42809 with PostgreSQL's hint
    "DROP TABLE IF EXISTS n_v",
    "DROP VIEW n_t",
]


@pytest.mark.parametrize("sql", ERRORS)
def test_error_as_postgres(conns: tuple[psycopg.Connection, ...], sql: str) -> None:
    def error(conn: psycopg.Connection) -> tuple[object, ...]:
        with pytest.raises(psycopg.Error) as info:
            conn.execute(sql)  # type: ignore[arg-type]  # test SQL
        d = info.value.diag
        return d.sqlstate, d.message_primary, d.message_detail, d.message_hint

    pg, hati = conns
    assert error(hati) == error(pg)
