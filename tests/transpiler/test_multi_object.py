"""DROP / TRUNCATE of several objects become one DuckDB statement per object, run as
one (transpiler/multi_object.py); ALTER TABLE ... RENAME carries its ALTER VIEW form."""

from __future__ import annotations

import duckdb
import pytest

from transpiler import transpile


@pytest.mark.parametrize(
    ("text", "expected", "atomic"),
    [
        ("DROP TABLE a, b", "DROP TABLE a; DROP TABLE b", True),
        (
            "DROP TABLE IF EXISTS a, s.b CASCADE",
            "DROP TABLE IF EXISTS a CASCADE; DROP TABLE IF EXISTS s.b CASCADE",
            True,
        ),
        ("DROP VIEW a, b", "DROP VIEW a; DROP VIEW b", True),
        ("DROP TABLE a", "DROP TABLE a", True),  # run whole: its serial sequences go too
        ("TRUNCATE a, b", "TRUNCATE TABLE a; TRUNCATE TABLE b", True),
        ("truncate table a, b", "TRUNCATE TABLE a; TRUNCATE TABLE b", True),
        ("TRUNCATE ONLY a CONTINUE IDENTITY CASCADE", "TRUNCATE TABLE a", False),
        ("TRUNCATE a", "TRUNCATE TABLE a", False),
    ],
)
def test_split(text: str, expected: str, atomic: bool) -> None:
    (st,) = transpile(text)
    assert (st.sql, st.atomic, st.warnings) == (expected, atomic, ())


def test_restart_identity_names_the_tables() -> None:
    (st,) = transpile("TRUNCATE TABLE a, s.b RESTART IDENTITY")
    assert st.sql == "TRUNCATE TABLE a; TRUNCATE TABLE s.b"
    assert (st.atomic, st.warnings) == (True, ())
    assert st.restart_identity == ((None, "a"), ("s", "b"))


@pytest.mark.parametrize(
    ("text", "tables"),
    [
        ("DROP TABLE a", ((None, "a"),)),
        ("DROP TABLE IF EXISTS a, s.b CASCADE", ((None, "a"), ("s", "b"))),
        ("DROP VIEW a", ()),
        ("DROP SEQUENCE a_id_seq", ()),
    ],
)
def test_drop_table_names_the_tables_whose_sequences_go(text: str, tables: tuple) -> None:
    (st,) = transpile(text)
    assert st.drop_owned_sequences == tables


def test_split_sql_runs_on_duckdb() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE a (i int); CREATE TABLE b (i int); INSERT INTO a VALUES (1)")
    con.execute(transpile("TRUNCATE a, b RESTART IDENTITY")[0].sql)
    assert con.execute("SELECT count(*) FROM a").fetchone() == (0,)
    con.execute(transpile("DROP TABLE IF EXISTS a, b, c")[0].sql)
    assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() == (0,)


@pytest.mark.parametrize(
    ("text", "view_sql"),
    [
        ("ALTER TABLE v RENAME TO w", "ALTER VIEW v RENAME TO w"),
        ("ALTER TABLE IF EXISTS s.v RENAME TO w", "ALTER VIEW IF EXISTS s.v RENAME TO w"),
        ("ALTER TABLE v ADD COLUMN x int", None),
        ("ALTER TABLE v RENAME COLUMN x TO y", None),
    ],
)
def test_view_form(text: str, view_sql: str | None) -> None:
    (st,) = transpile(text)
    assert st.view_sql == view_sql


def test_explain_of_several_objects_is_not_split() -> None:
    (st,) = transpile("EXPLAIN DROP TABLE a, b")
    assert (st.sql, st.atomic) == ("EXPLAIN DROP TABLE a, b", False)
