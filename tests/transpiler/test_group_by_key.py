"""GROUP BY a primary key: the table's other selected columns join the GROUP BY."""

from __future__ import annotations

import duckdb

from transpiler import ColumnHints, transpile

HINTS = ColumnHints(
    {"a": {"id": "other", "name": "text"}, "b": {"id": "other", "a_id": "other"}},
    primary_keys={"a": ["id"], "b": ["id"]},
)


def _run(sql: str, hints: ColumnHints | None = HINTS) -> list[tuple]:
    con = duckdb.connect()
    con.execute("CREATE TABLE a (id INT PRIMARY KEY, name TEXT)")
    con.execute("CREATE TABLE b (id INT PRIMARY KEY, a_id INT)")
    con.execute("INSERT INTO a VALUES (1, 'x'), (2, 'y'); INSERT INTO b VALUES (1, 1), (2, 1)")
    (st,) = transpile(sql, hints=hints)
    return con.execute(st.sql).fetchall()


def test_django_annotate_count_positional() -> None:
    sql = (
        'SELECT "a"."id", "a"."name", COUNT("b"."id") AS "n" FROM "a" LEFT OUTER JOIN "b" '
        'ON ("a"."id" = "b"."a_id") GROUP BY 1 ORDER BY 1'
    )
    assert _run(sql) == [(1, "x", 2), (2, "y", 0)]


def test_alias_and_having() -> None:
    sql = (
        "SELECT t.name, count(*) FROM a t JOIN b ON b.a_id = t.id GROUP BY t.id HAVING t.name = 'x'"
    )
    assert _run(sql) == [("x", 2)]


def test_not_a_key_is_left_for_duckdb_to_refuse() -> None:
    (st,) = transpile("SELECT a_id, id, count(*) FROM b GROUP BY a_id", hints=HINTS)
    assert st.sql.endswith("GROUP BY a_id")


def test_no_hints_no_rewrite() -> None:
    (st,) = transpile("SELECT id, name FROM a GROUP BY id", hints=None)
    assert st.sql.endswith("GROUP BY id")
