"""ALTER TABLE on tables with rows, keys and views, over the wire side by side with
PostgreSQL 15: the errors' SQLSTATE, message, DETAIL and HINT when a view or another
table's foreign key depends on the column (proxy/pgserver/view_deps.py), a NOT NULL
added over NULLs, and a serial column added NOT NULL to a keyed table with rows
(proxy/pgserver/constraint_ddl.py)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.differential.sides import connected_sides

SETUP = [
    "CREATE TABLE w_adp (id serial PRIMARY KEY, name varchar(20) NOT NULL, n int)",
    "INSERT INTO w_adp (name, n) VALUES ('a', 1), ('b', NULL)",
    "CREATE INDEX w_adp_n ON w_adp (n)",
    "CREATE TABLE w_adc (id serial PRIMARY KEY, p_id int REFERENCES w_adp (id))",
    "CREATE VIEW w_adv AS SELECT id, name FROM w_adp",
    "CREATE VIEW w_adv_star AS SELECT * FROM w_adc",
    "CREATE TABLE w_adk (a int PRIMARY KEY, c text)",
    "INSERT INTO w_adk VALUES (1, 'x'), (2, 'y')",
]


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[psycopg.Connection]]:
    with connected_sides(tmp_path_factory.mktemp("alter_deps"), SETUP) as conns:
        yield conns


def _outcome(conn: psycopg.Connection, sql: str) -> tuple:
    try:
        cur = conn.execute(sql)
        return ("ok", cur.fetchall() if cur.description else cur.rowcount)
    except psycopg.Error as err:
        d = err.diag
        return (err.sqlstate, d.message_primary, d.message_detail, d.message_hint)


# in order: each step sees the tables the ones before left (one test, so that workers
# never split the sequence)
STEPS = [
    "ALTER TABLE w_adp ALTER COLUMN name TYPE text",
    "ALTER TABLE w_adp DROP COLUMN id",
    "ALTER TABLE w_adp DROP COLUMN name",
    "ALTER TABLE w_adc DROP COLUMN p_id",
    "ALTER TABLE w_adc ALTER COLUMN p_id TYPE bigint",
    "ALTER TABLE w_adc ADD COLUMN extra int",  # not the star view's: dropped
    "ALTER TABLE w_adc DROP COLUMN extra",
    "ALTER TABLE w_adp ALTER COLUMN n SET NOT NULL",
    "ALTER TABLE w_adp ADD COLUMN m int NOT NULL",
    "SELECT id, name, n FROM w_adp ORDER BY 1",
    "ALTER TABLE w_adk ADD COLUMN s serial NOT NULL",
    "SELECT * FROM w_adk ORDER BY 1",
    "ALTER TABLE w_adk DROP CONSTRAINT w_adk_pkey",
    "SELECT attname, attnotnull FROM pg_attribute WHERE attrelid = 'w_adk'::regclass "
    "AND attnum > 0 ORDER BY attnum",
]


def test_same_outcomes_as_postgres(sides) -> None:
    pg, hati = sides
    differ = [
        (sql, want, got)
        for sql in STEPS
        if (want := _outcome(pg, sql)) != (got := _outcome(hati, sql))
    ]
    assert not differ
