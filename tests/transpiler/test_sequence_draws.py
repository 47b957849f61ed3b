"""transpiler/sequence_draws.py: where a DuckDB statement draws sequence values, and
currval / lastval replaced by the session's values."""

from __future__ import annotations

import pytest

from transpiler import transpile
from transpiler.sequence_draws import draws, session_values, with_returning


def test_reads_nothing_from_statements_that_draw_nothing() -> None:
    assert draws("SELECT 1") is None
    assert draws("DELETE FROM t WHERE id = 1") is None
    assert draws("UPDATE t SET a = 1") is None  # no DEFAULT: no column default runs


def test_an_insert_values_shows_what_it_gives() -> None:
    d = draws("INSERT INTO s.t (a, b) VALUES (1, 2), (3, 4)")
    assert d is not None and d.target == ("s", "t") and d.plain_values
    assert d.values == ("a", "b") and d.returning is None
    d = draws('INSERT INTO "T" VALUES (1, 2) RETURNING id, "T".v, *, a + 1')
    assert d is not None and d.target == (None, "t") and d.values is None and d.width == 2
    assert d.returning == ("id", "v", "*", None)
    d = draws("INSERT INTO t DEFAULT VALUES")
    assert d is not None and d.plain_values and d.values == ()


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t (a) VALUES (1), (DEFAULT)",  # a listed column's default drawn per row
        "INSERT INTO t (a) VALUES (1) ON CONFLICT DO NOTHING",  # conflicting rows drew too
        "INSERT INTO t (a) SELECT 1",
        "INSERT INTO t (id, a) VALUES (nextval('s'), 1)",
    ],
)
def test_other_inserts_are_read_around(sql: str) -> None:
    d = draws(sql)
    assert d is not None and d.target == (None, "t") and not d.plain_values


def test_inserts_whose_every_row_draws() -> None:
    d = draws("INSERT INTO t (a) SELECT x FROM u")
    assert d is not None and d.per_row and not d.surely  # maybe no row
    d = draws("INSERT INTO t (a) VALUES (1), (2) ON CONFLICT (a) DO NOTHING")
    assert d is not None and d.per_row and d.surely  # a conflicting row drew too
    for sql in (
        "INSERT INTO t SELECT 1",  # which columns: not known here
        "INSERT INTO t (a) SELECT 1 ON CONFLICT DO NOTHING",  # rows that conflict: unknown
        "INSERT INTO t (a) VALUES (DEFAULT) ON CONFLICT DO NOTHING",
    ):
        d = draws(sql)
        assert d is not None and not d.per_row, sql


def test_explicit_nextval_calls_and_update_set_default() -> None:
    d = draws("SELECT nextval('public.\"My_Seq\"') + 1, nextval('other')")
    assert d is not None and d.named == ("My_Seq", "other") and d.selected == ()
    d = draws("SELECT nextval('s') AS id")
    assert d is not None and d.selected == ((0, "s"),)
    d = draws("UPDATE t SET id = DEFAULT")
    assert d is not None and d.target == (None, "t") and d.defaults


def test_with_returning() -> None:
    assert with_returning("INSERT INTO t (a) VALUES (1)", ["id"]) == (
        'INSERT INTO t (a) VALUES (1) RETURNING "id"'
    )
    assert with_returning("INSERT INTO t DEFAULT VALUES", ['a"b']) == (
        'INSERT INTO t DEFAULT VALUES RETURNING "a""b"'
    )


def test_the_transpiler_keeps_them_on_the_statement() -> None:
    (st,) = transpile("INSERT INTO t (v) VALUES ($1) RETURNING id")
    assert st.draws is not None and st.draws.plain_values and st.draws.returning == ("id",)
    (st,) = transpile("SELECT nextval('s')")
    assert st.draws is not None and st.draws.selected == ((0, "s"),)
    (st,) = transpile("SELECT 1")
    assert st.draws is None


def test_session_values_replace_currval_and_lastval() -> None:
    (st,) = transpile("SELECT currval('public.t_id_seq'::regclass), lastval(), 'currval(x)'")
    values = {"main.t_id_seq": 7}
    out = session_values(st.sql, values.__getitem__, lambda: 9)
    assert out == "SELECT CAST(7 AS BIGINT), CAST(9 AS BIGINT), 'currval(x)'"
