"""The commonest errors in PostgreSQL's words and SQLSTATE, next to PostgreSQL 15's own.

Clients show the message to people, and people search for it: `invalid input syntax for
type integer: "abc"` rather than DuckDB's `Could not convert string 'abc' to INT32`
(which hatiproxy keeps in DETAIL). proxy/db/duckdb_errors.py `_PG_WORDS`.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_and_hatiproxy

SETUP = (
    "CREATE TABLE w_err (id int PRIMARY KEY, n smallint, d date)",
    "INSERT INTO w_err VALUES (1, 1, '2024-01-01')",
    "CREATE TABLE w_uniq (id int PRIMARY KEY, code text UNIQUE, a int, b text, UNIQUE (a, b))",
    "CREATE UNIQUE INDEX w_uniq_lower_b ON w_uniq (lower(b))",
    "INSERT INTO w_uniq VALUES (1, 'x', 1, 'p'), (2, 'y', 2, 'q')",
    "CREATE TABLE w_part (id int PRIMARY KEY, email text, deleted boolean)",
    "CREATE UNIQUE INDEX w_part_live ON w_part (email) WHERE NOT deleted",
    "INSERT INTO w_part VALUES (1, 'a', false), (2, 'a', true)",
    "CREATE SCHEMA w_other",
    "CREATE TYPE w_mood AS ENUM ('calm')",
    "CREATE SEQUENCE w_seq",
    "CREATE TABLE w_gen (a int, b int GENERATED ALWAYS AS (a * 2) STORED)",
    "CREATE TABLE w_other.w_nn (id int PRIMARY KEY, name text NOT NULL)",
    "INSERT INTO w_other.w_nn VALUES (1, 'x')",
    "CREATE TABLE w_parent (id int PRIMARY KEY)",
    "CREATE TABLE w_child (id int PRIMARY KEY, parent_id int REFERENCES w_parent (id))",
    "CREATE TABLE w_child2 (id int PRIMARY KEY, p int, CONSTRAINT w_child2_p FOREIGN KEY (p) REFERENCES w_parent)",
)
FAILING = [
    "SELECT 'abc'::int",
    "SELECT 'abc'::bigint",
    "SELECT 'x'::smallint",
    "SELECT 'maybe'::boolean",
    "SELECT 'x'::float8",
    "SELECT 'x'::real",
    "SELECT 'x'::numeric(10,2)",
    "SELECT 'x'::date",
    "SELECT 'noon'::timestamp",
    "SELECT '2024-02-30'::date",
    "SELECT 2147483647 + 1",
    "SELECT 9223372036854775807 * 2",
    "SELECT 3000000000::int",
    "SELECT 40000::smallint",
    "SELECT * FROM w_err WHERE id = 'x'",
    "SELECT w_no_such_column",  # no FROM clause
    "INSERT INTO w_err (id) VALUES ('seven')",
    "SELECT nosuch FROM w_err",
    "SELECT w_err.nosuch FROM w_err",
    "SELECT * FROM nosuch_table",
    "SELECT x.id FROM w_err",
    "SELECT id FROM w_err, w_uniq",
    "CREATE TABLE w_err (x int)",
    "CREATE VIEW w_err AS SELECT 1",
    "CREATE INDEX w_part_live ON w_part (id)",
    "CREATE SEQUENCE w_seq",
    "CREATE SCHEMA w_other",
    "CREATE TYPE w_mood AS ENUM ('sad')",
    "SELECT 'abc'::uuid",
    "SELECT '{bad'::json",
    "SELECT '[1,'::jsonb",
    "INSERT INTO w_err VALUES (2, 1, '2024-01-01', 4)",
    "UPDATE w_gen SET b = 1",
    # a domain's CHECK / DEFAULT reads no table (it would, for anyone casting to it)
    "CREATE DOMAIN w_dom AS int CHECK (VALUE <> (SELECT max(id) FROM w_err))",
    "CREATE DOMAIN w_dom AS int CHECK (VALUE > 0 OR EXISTS (SELECT 1 FROM w_err))",
    "CREATE DOMAIN w_dom AS int DEFAULT (SELECT max(id) FROM w_err)",
    # one alias twice (Tortoise's filter back across a reverse relation); DuckDB refuses it
    # only when a column names it
    'SELECT count("x"."id") FROM w_err "x" JOIN w_err "x" ON true',
]


@pytest.fixture(scope="module")
def conns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[psycopg.Connection, ...]]:
    with (
        pg_and_hatiproxy(tmp_path_factory.mktemp("errwords"), list(SETUP)) as (pg_dsn, hati_dsn),
        psycopg.connect(pg_dsn, autocommit=True) as a,
        psycopg.connect(hati_dsn, autocommit=True) as b,
    ):
        yield a, b


def _error(conn: psycopg.Connection, sql: str) -> tuple[str | None, str]:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql)  # type: ignore[arg-type]  # test SQL
    diag = info.value.diag
    return diag.sqlstate, diag.message_primary or ""


@pytest.mark.parametrize("sql", FAILING)
def test_error_in_postgres_words(conns: tuple[psycopg.Connection, ...], sql: str) -> None:
    pg, hati = conns
    assert _error(hati, sql) == _error(pg, sql)


# A unique violation: PostgreSQL's message, DETAIL and the constraint / table / schema
# fields applications read (proxy/pgserver/unique_violation.py).
UNIQUE = [
    "INSERT INTO w_uniq VALUES (1, 'new', 9, 'new')",
    "INSERT INTO w_uniq VALUES (3, 'x', 9, 'new')",
    "INSERT INTO w_uniq (id, code, a, b) VALUES (3, 'z', 1, 'p')",
    "INSERT INTO w_uniq VALUES (3, 'z', 7, 'P')",
    "UPDATE w_uniq SET code = 'x' WHERE id = 2",
    "INSERT INTO public.w_uniq VALUES (2, 'w', 8, 'w')",
    "INSERT INTO w_part VALUES (3, 'a', false)",  # a partial unique index
    # a duplicate within the statement: DuckDB names no column; the one unique index whose
    # columns can hold the values is named
    "INSERT INTO w_err VALUES (7, 1, '2024-01-01'), (7, 2, '2024-01-02')",
    "INSERT INTO w_uniq VALUES (5, 'dup', 50, 'm'), (6, 'dup', 51, 'n')",
]


def _unique_error(conn: psycopg.Connection, sql: str) -> tuple[object, ...]:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql)  # type: ignore[arg-type]  # test SQL
    d = info.value.diag
    return (
        d.sqlstate,
        d.message_primary,
        d.message_detail,
        d.schema_name,
        d.table_name,
        d.constraint_name,
    )


@pytest.mark.parametrize("sql", UNIQUE)
def test_unique_violation_names_its_constraint(
    conns: tuple[psycopg.Connection, ...], sql: str
) -> None:
    pg, hati = conns
    assert _unique_error(hati, sql) == _unique_error(pg, sql)


def test_unique_violation_in_a_block_names_its_constraint(
    conns: tuple[psycopg.Connection, ...],
) -> None:
    """A duplicate of a row the same open transaction wrote (pgx batches, savepoints)."""
    outcomes = []
    for conn in conns:
        with conn.transaction(force_rollback=True):
            conn.execute("INSERT INTO w_err VALUES (9, 1, '2024-01-01')")
            outcomes.append(_unique_error(conn, "INSERT INTO w_err VALUES (9, 2, '2024-01-02')"))
    assert outcomes[0][2] == "Key (id)=(9) already exists."
    assert outcomes[1] == outcomes[0]


# A NOT NULL violation names its column, table and schema (ErrorResponse fields c, t, s).
NOT_NULL = [
    "INSERT INTO w_uniq (id, code) VALUES (NULL, 'n')",
    "INSERT INTO w_other.w_nn VALUES (2, NULL)",
    "INSERT INTO w_other.w_nn (id) VALUES (3)",
    "UPDATE w_other.w_nn SET name = NULL",
]


@pytest.mark.parametrize("sql", NOT_NULL)
def test_not_null_violation_names_its_column(
    conns: tuple[psycopg.Connection, ...], sql: str
) -> None:
    pg, hati = conns

    def error(conn: psycopg.Connection) -> tuple[object, ...]:
        with pytest.raises(psycopg.Error) as info:
            conn.execute(sql)  # type: ignore[arg-type]  # test SQL
        d = info.value.diag
        return d.sqlstate, d.message_primary, d.schema_name, d.table_name, d.column_name

    assert error(hati) == error(pg)


def test_a_table_other_tables_reference_is_dropped_only_with_cascade(
    conns: tuple[psycopg.Connection, ...],
) -> None:
    """DROP TABLE of a foreign key's parent: 2BP01 naming each key; CASCADE drops the keys
    (not the tables holding them), and its NOTICE says so."""
    answers = []
    for conn in conns:
        with pytest.raises(psycopg.Error) as info:
            conn.execute("DROP TABLE w_parent")
        d = info.value.diag
        notices: list[str] = []
        conn.add_notice_handler(lambda n, out=notices: out.append(n.message_primary or ""))
        conn.execute("DROP TABLE w_parent CASCADE")
        conn.execute("INSERT INTO w_child VALUES (1, 99)")  # the key went with the parent
        keys = conn.execute("SELECT count(*) FROM pg_constraint WHERE contype = 'f'").fetchone()
        answers.append(
            (d.sqlstate, d.message_primary, d.message_detail, d.message_hint, notices, keys)
        )
    assert answers[0] == answers[1]
    assert answers[1][0] == "2BP01"


def test_a_value_for_a_generated_column_is_428c9(conns: tuple[psycopg.Connection, ...]) -> None:
    """(PostgreSQL names the column in its message; DuckDB's does not.)"""
    states = []
    for conn in conns:
        with pytest.raises(psycopg.Error) as info:
            conn.execute("INSERT INTO w_gen (a, b) VALUES (1, 2)")
        states.append(info.value.diag.sqlstate)
    assert states == ["428C9", "428C9"]
