"""Over the wire side by side with PostgreSQL 15 (proxy/pgserver/view_deps.py):
ALTER TABLE ... DROP COLUMN ... CASCADE drops the views that read the column and the views
over those with PostgreSQL's NOTICE, the views that do not read it stay, and a ROLLBACK
brings all of it back; after ALTER TABLE t RENAME TO t2 the views over t read t2."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.differential.sides import connected_sides

SETUP = [
    "CREATE TABLE w_dcc (id int PRIMARY KEY, a int, b text)",
    "INSERT INTO w_dcc VALUES (1, 10, 'x')",
    "CREATE VIEW w_dcc_a AS SELECT id, a FROM w_dcc",
    "CREATE VIEW w_dcc_over AS SELECT a FROM w_dcc_a",
    "CREATE VIEW w_dcc_b AS SELECT id, b FROM w_dcc",
    "CREATE TABLE w_dcc2 (id int, c int)",
    "CREATE VIEW w_dcc2_c AS SELECT c FROM w_dcc2",
]

VIEWS = "SELECT table_name FROM information_schema.views WHERE table_name LIKE 'w_dcc%' ORDER BY 1"
COLUMNS = "SELECT column_name FROM information_schema.columns WHERE table_name = 'w_dcc' ORDER BY 1"


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[psycopg.Connection]]:
    with connected_sides(tmp_path_factory.mktemp("drop_cascade"), SETUP) as conns:
        yield conns


def _run(conn: psycopg.Connection, sqls: list[str]) -> list[tuple]:
    notices: list[str] = []
    conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    out: list[tuple] = []
    for sql in sqls:
        notices.clear()
        try:
            cur = conn.execute(sql)
            rows = cur.fetchall() if cur.description else cur.rowcount
            out.append((sql, "ok", rows, list(notices)))
        except psycopg.Error as err:
            out.append((sql, err.sqlstate, err.diag.message_primary, list(notices)))
    return out


def test_cascade_as_postgres(sides) -> None:
    pg, hati = sides
    steps = [
        "BEGIN",
        "ALTER TABLE w_dcc DROP COLUMN a CASCADE",
        VIEWS,
        COLUMNS,
        "ROLLBACK",
        VIEWS,
        COLUMNS,
        "SELECT * FROM w_dcc_over",
        "ALTER TABLE w_dcc2 DROP COLUMN c CASCADE",
        VIEWS,
        "ALTER TABLE w_dcc DROP COLUMN a CASCADE",
        VIEWS,
        "SELECT * FROM w_dcc_b",
        "ALTER TABLE w_dcc DROP COLUMN b CASCADE",
        VIEWS,
        COLUMNS,
    ]
    want, got = _run(pg, steps), _run(hati, steps)
    for g, w in zip(got, want, strict=True):
        assert g == w


def _run_detail(conn: psycopg.Connection, sqls: list[str]) -> list[tuple]:
    """As _run, with each NOTICE's DETAIL and each error's DETAIL."""
    notices: list[tuple] = []
    conn.add_notice_handler(lambda d: notices.append((d.message_primary, d.message_detail)))
    out: list[tuple] = []
    for sql in sqls:
        notices.clear()
        try:
            cur = conn.execute(sql)
            rows = cur.fetchall() if cur.description else cur.rowcount
            out.append((sql, "ok", rows, list(notices)))
        except psycopg.Error as err:
            diag = err.diag
            out.append((sql, err.sqlstate, diag.message_primary, diag.message_detail))
    return out


INDEXES = "SELECT tablename, indexname FROM pg_indexes WHERE tablename LIKE 'w_dcck%' ORDER BY 1, 2"
KEYS = (
    "SELECT conrelid::regclass::text, conname, contype FROM pg_constraint "
    "WHERE conrelid::regclass::text LIKE 'w_dcck%' AND contype IN ('p', 'u', 'f', 'c') "
    "ORDER BY 1, 2"
)


def test_keyed_and_indexed_columns_as_postgres(sides) -> None:
    """DROP COLUMN of a column a PRIMARY KEY, UNIQUE, CHECK or index uses, or of one before
    such a column, with and without CASCADE and views over it: the key, index or CHECK goes
    with the column and the rows stay (DuckDB refuses all of these itself: the table is
    rebuilt); a column another table's foreign key references is 2BP01 without CASCADE;
    the NOTICE's DETAIL lists what CASCADE dropped."""
    pg, hati = sides
    setup = [
        "CREATE TABLE w_dcck (id int PRIMARY KEY, a int, b int UNIQUE, c int, d int, "
        "e int CHECK (e > a), UNIQUE (c, d))",
        "CREATE INDEX w_dcck_c ON w_dcck (c)",
        "INSERT INTO w_dcck VALUES (1, 10, 100, 1000, 1, 11), (2, 20, 200, 2000, 2, 22)",
        "CREATE VIEW w_dcck_v AS SELECT id, b FROM w_dcck",
        "CREATE VIEW w_dcck_w AS SELECT b FROM w_dcck_v",
        "CREATE VIEW w_dcck_x AS SELECT id FROM w_dcck",
        "CREATE TABLE w_dcck_child (id int PRIMARY KEY, p int REFERENCES w_dcck (id))",
        "INSERT INTO w_dcck_child VALUES (1, 1)",
    ]
    steps = [
        "ALTER TABLE w_dcck DROP COLUMN a",  # before keys; the CHECK (e > a) goes
        "SELECT * FROM w_dcck ORDER BY id",
        KEYS,
        "ALTER TABLE w_dcck DROP COLUMN b",  # a view reads it: 2BP01
        "BEGIN",
        "ALTER TABLE w_dcck DROP COLUMN b CASCADE",  # its UNIQUE and two views go
        INDEXES,
        "ROLLBACK",
        INDEXES,
        "SELECT * FROM w_dcck_w ORDER BY 1",
        "ALTER TABLE w_dcck DROP COLUMN b CASCADE",
        "SELECT table_name FROM information_schema.views WHERE table_name LIKE 'w_dcck%' "
        "ORDER BY 1",
        "ALTER TABLE w_dcck DROP COLUMN c",  # an index and a two-column UNIQUE use it
        INDEXES,
        KEYS,
        "SELECT * FROM w_dcck ORDER BY id",
        "INSERT INTO w_dcck VALUES (2, 3, 4)",  # the key is still there: 23505
        "ALTER TABLE w_dcck DROP COLUMN id",  # w_dcck_x and the foreign key use it
        "ALTER TABLE w_dcck DROP COLUMN id CASCADE",
        INDEXES,
        KEYS,
        "INSERT INTO w_dcck_child VALUES (2, 99)",  # no foreign key left
        "ALTER TABLE w_dcck DROP COLUMN IF EXISTS nope",  # a NOTICE
        "ALTER TABLE w_dcck DROP COLUMN nope",  # 42703 naming the table
        "SELECT * FROM w_dcck ORDER BY 1",
        "SELECT column_name, is_nullable FROM information_schema.columns "
        "WHERE table_name = 'w_dcck' ORDER BY 1",
    ]
    _run(pg, setup), _run(hati, setup)
    for g, w in zip(_run_detail(hati, steps), _run_detail(pg, steps), strict=True):
        assert g == w


def test_views_follow_table_rename(sides) -> None:
    """`ALTER TABLE t RENAME TO t2`: the views over t (and over those) read t2, as
    PostgreSQL's do; a rolled back rename leaves them reading t."""
    pg, hati = sides
    setup = [
        "CREATE TABLE w_dccr (id int, b int)",
        "INSERT INTO w_dccr VALUES (1, 2)",
        "CREATE VIEW w_dccr_v AS SELECT w_dccr.b FROM w_dccr WHERE id > 0",
        "CREATE VIEW w_dccr_w AS SELECT b FROM w_dccr_v",
    ]
    steps = [
        "BEGIN",
        "ALTER TABLE w_dccr RENAME TO w_dccr_x",
        "SELECT * FROM w_dccr_w",
        "ROLLBACK",
        "SELECT * FROM w_dccr_v",
        "ALTER TABLE w_dccr RENAME TO w_dccr2",
        "SELECT * FROM w_dccr_w",
        "SELECT * FROM w_dccr_v",
        "CREATE TABLE w_dccr (id int, b int)",  # a new table of the old name: not theirs
        "SELECT * FROM w_dccr_v",
    ]
    _run(pg, setup), _run(hati, setup)
    for g, w in zip(_run(hati, steps), _run(pg, steps), strict=True):
        assert g == w


def test_views_follow_set_schema(sides) -> None:
    """`ALTER TABLE t SET SCHEMA s`: the views over t read s.t, as PostgreSQL's do."""
    pg, hati = sides
    setup = [
        "CREATE SCHEMA w_dccs",
        "CREATE TABLE w_dccm (id int, b int)",
        "INSERT INTO w_dccm VALUES (1, 2)",
        "CREATE VIEW w_dccm_v AS SELECT b FROM w_dccm",
        "CREATE VIEW w_dccm_w AS SELECT b FROM w_dccm_v",
    ]
    steps = [
        "ALTER TABLE w_dccm SET SCHEMA w_dccs",
        "SELECT * FROM w_dccm_w",
        "SELECT * FROM w_dccm_v",
    ]
    _run(pg, setup), _run(hati, setup)
    for g, w in zip(_run(hati, steps), _run(pg, steps), strict=True):
        assert g == w


def test_views_follow_rename_column(sides) -> None:
    """`ALTER TABLE t RENAME COLUMN b TO c` (Django's RenameField, Rails' rename_column):
    the views reading b read c and keep their own column named b, as PostgreSQL's; a
    rolled back rename leaves them as they were."""
    pg, hati = sides
    setup = [
        "CREATE TABLE w_dccc (id int PRIMARY KEY, b int)",
        "INSERT INTO w_dccc VALUES (1, 2)",
        "CREATE VIEW w_dccc_v AS SELECT id, b FROM w_dccc WHERE b > 0",
        "CREATE VIEW w_dccc_w AS SELECT b FROM w_dccc_v",
    ]
    steps = [
        "BEGIN",
        'ALTER TABLE "w_dccc" RENAME COLUMN "b" TO "c"',
        "SELECT * FROM w_dccc_w",
        "ROLLBACK",
        "SELECT * FROM w_dccc_v",
        'ALTER TABLE "w_dccc" RENAME COLUMN "b" TO "c"',
        "SELECT * FROM w_dccc_v",
        "SELECT * FROM w_dccc_w",
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'w_dccc_v' "
        "ORDER BY ordinal_position",
    ]
    _run(pg, setup), _run(hati, setup)
    for g, w in zip(_run(hati, steps), _run(pg, steps), strict=True):
        assert g == w
