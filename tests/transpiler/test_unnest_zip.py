"""FROM unnest(a, b, ...) -> a SELECT of one unnest() per array (unnest_zip)."""

from __future__ import annotations

import duckdb

from transpiler import transpile


def _sql(q: str) -> str:
    (st,) = transpile(q)
    return st.sql


def test_bulk_create_insert_keeps_returning() -> None:
    sql = _sql(
        'INSERT INTO "t" ("a", "b") SELECT * FROM UNNEST(($1)::integer[], ($2)::varchar[]) '
        'RETURNING "t"."id"'
    )
    assert sql.endswith('RETURNING "t"."id"')
    assert "(SELECT UNNEST(" in sql
    con = duckdb.connect()
    con.execute("CREATE SEQUENCE s; CREATE TABLE t (id INT DEFAULT nextval('s'), a INT, b TEXT)")
    rows = con.execute(sql, [[1, 2, 3], ["x", "y", "z"]]).fetchall()
    assert rows == [(1,), (2,), (3,)]
    assert con.execute("SELECT a, b FROM t ORDER BY id").fetchall() == [
        (1, "x"),
        (2, "y"),
        (3, "z"),
    ]


def test_alias_columns_name_the_zipped_columns() -> None:
    sql = _sql("SELECT x, y FROM unnest(ARRAY[1, 2], ARRAY['a']) AS u(x, y)")
    assert duckdb.connect().execute(sql).fetchall() == [(1, "a"), (2, None)]


def test_one_argument_and_ordinality_are_left_alone() -> None:
    assert _sql("SELECT * FROM unnest(ARRAY[1, 2])") == "SELECT * FROM UNNEST([1, 2])"
    # several arrays WITH ORDINALITY zip too, with the ordinal column (Django's inspectdb)
    zipped = _sql("SELECT * FROM unnest(ARRAY[1], ARRAY[2]) WITH ORDINALITY AS t(a, b, n)")
    assert "(SELECT UNNEST(" in zipped and "RANGE(" in zipped.upper()
