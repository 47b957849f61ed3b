"""A statement whose last results were short is read with fetchmany instead of Arrow
(arrow_results.ResultSizes); when it then returns a long result, every row still arrives,
in order, with the same values as through Arrow."""

from __future__ import annotations

import psycopg
import pytest

ROWS = 5000


@pytest.mark.parametrize("binary", [False, True])
def test_short_then_long_result_of_one_statement(server, table_name, binary: bool) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id integer PRIMARY KEY, name text, d date)")
        conn.execute(
            f"INSERT INTO {table_name} SELECT g, 'n' || g, DATE '2020-01-01' + g::integer "
            f"FROM generate_series(1, {ROWS}) AS s(g)"
        )
        arrow_rows = conn.execute(
            f"SELECT id, name, d FROM {table_name} ORDER BY id", binary=binary
        ).fetchall()
        assert len(arrow_rows) == ROWS and arrow_rows[0][:2] == (1, "n1")
        query = f"SELECT id, name, d FROM {table_name} WHERE id <= %s ORDER BY id"
        cur = conn.cursor(binary=binary)
        for _ in range(4):  # short results: the statement is now read with fetchmany
            assert cur.execute(query, (2,), prepare=True).fetchall() == arrow_rows[:2]
        assert cur.execute(query, (ROWS,), prepare=True).fetchall() == arrow_rows
        assert cur.execute(query, (ROWS,), prepare=True).fetchall() == arrow_rows
        assert cur.execute(query, (1,), prepare=True).fetchall() == arrow_rows[:1]
        assert cur.execute(query, (0,), prepare=True).fetchall() == []
