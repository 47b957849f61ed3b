"""INSERT without a column list and fewer values than columns (transpiler/insert_columns.py):
Postgres fills the first N columns; with catalog hints the transpiler names them."""

from __future__ import annotations

import duckdb
import pytest

from transpiler import ColumnHints, Statement, transpile

HINTS = ColumnHints(
    {"t": {"id": "other", "note": "text", "extra": "other"}},
    order={"t": ("id", "Note", "extra"), "one": ("only",)},
)


def one(sql: str, hints: ColumnHints | None = HINTS) -> Statement:
    (stmt,) = transpile(sql, hints=hints)
    return stmt


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("INSERT INTO t VALUES (1, 'a')", """INSERT INTO t ("id", "Note") VALUES (1, 'a')"""),
        ("INSERT INTO t VALUES (1), (2)", 'INSERT INTO t ("id") VALUES (1), (2)'),
        ("INSERT INTO t VALUES ($1, $2)", 'INSERT INTO t ("id", "Note") VALUES ($1, $2)'),
        ("INSERT INTO main.t SELECT 1", 'INSERT INTO main.t ("id") SELECT 1'),
        (
            "INSERT INTO t SELECT 1, 'a' UNION ALL SELECT 2, 'b'",
            """INSERT INTO t ("id", "Note") SELECT 1, 'a' UNION ALL SELECT 2, 'b'""",
        ),
        (
            "INSERT INTO t (SELECT x, y FROM s) RETURNING *",
            'INSERT INTO t ("id", "Note") (SELECT x, y FROM s) RETURNING *',
        ),
        (
            "INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING",
            'INSERT INTO t ("id") VALUES (1) ON CONFLICT DO NOTHING',
        ),
    ],
)
def test_fewer_values_name_the_first_columns(sql: str, expected: str) -> None:
    assert one(sql).sql == expected


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (1, 'a', 2)",  # all columns
        "INSERT INTO t VALUES (1, 'a', 2, 3)",  # too many: DuckDB's error stands
        "INSERT INTO t (id) VALUES (1)",  # a column list
        "INSERT INTO t SELECT * FROM s",  # width unknown
        "INSERT INTO t SELECT s.* FROM s",
        "INSERT INTO t VALUES (1), (2, 'b')",  # rows of differing lengths
        "INSERT INTO t BY NAME SELECT 1 AS id",
        "INSERT INTO t DEFAULT VALUES",
        "INSERT INTO unknown VALUES (1)",  # a table the hints do not know
        "INSERT INTO one VALUES (1)",
    ],
)
def test_left_as_written(sql: str) -> None:
    assert one(sql).sql == one(sql, None).sql


def test_without_hints_nothing_changes_and_order_is_part_of_the_cache_key() -> None:
    sql = "INSERT INTO t VALUES (1, 'a')"
    assert one(sql, None).sql == sql
    reordered = ColumnHints(
        {"t": {"id": "other", "note": "text", "extra": "other"}},
        order={"t": ("Note", "id", "extra"), "one": ("only",)},
    )
    assert reordered != HINTS
    assert one(sql, reordered).sql == """INSERT INTO t ("Note", "id") VALUES (1, 'a')"""


def test_rewritten_insert_runs_on_duckdb_with_defaults() -> None:
    con = duckdb.connect()
    con.execute('CREATE TABLE t (id INT, "Note" TEXT, extra INT DEFAULT 7)')
    con.execute(one("INSERT INTO t VALUES (1, 'a')").sql)
    con.execute(one("INSERT INTO t SELECT 2").sql)
    assert con.execute("SELECT * FROM t ORDER BY id").fetchall() == [(1, "a", 7), (2, None, 7)]
