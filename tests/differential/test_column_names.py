"""Result column names as PostgreSQL 15 gives them to unnamed select-list expressions,
compared with a real PostgreSQL in the same run. Drivers (psycopg dict rows), pandas,
ORMs' raw queries and BI tools key rows by these names: a function sqlglot folds into one
of its own node types (to_char, date_trunc, string_agg, lpad, char_length, strpos, ...)
must keep the name it was called by, an operator sqlglot reads as a function (`~`, `@>`)
is ?column?, a cast over a cast takes the outer type (transpiler/colnames.py)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_and_hatiproxy

EXPRESSIONS = [
    # folded by sqlglot into its own nodes
    "to_char(timestamp '2024-03-05 14:07:09', 'YYYY')",
    "date_trunc('month', timestamp '2024-03-05')",
    "string_agg('a', ',')",
    "lpad('7', 3, '0')",
    "rpad('7', 3, '0')",
    "bool_and(true)",
    "bool_or(true)",
    "every(true)",
    "json_agg(1)",
    "json_object_agg('a', 1)",
    "char_length('a')",
    "character_length('a')",
    "substr('abc', 2)",
    "position('b' in 'abc')",
    "strpos('abc', 'b')",
    "ceiling(1.5)",
    "pow(2, 3)",
    "log10(10)",
    "mod(5, 2)",
    "make_timestamp(2024, 1, 2, 3, 4, 5)",
    "to_timestamp(0)",
    "to_date('2024-01-02', 'YYYY-MM-DD')",
    "array_cat(ARRAY[1], ARRAY[2])",
    "regexp_like('a', 'b')",
    "now()",
    "pg_catalog.lower('A')",
    "\"lower\"('A')",
    # TRIM is named by what it does
    "trim(' a ')",
    "trim(both ' ' from ' a ')",
    "trim(leading ' ' from ' a')",
    "trim(trailing ' ' from ' a')",
    "ltrim(' a')",
    "btrim(' a ')",
    # keywords
    "current_timestamp",
    "current_date",
    "localtimestamp",
    "localtime",
    "current_user",
    "session_user",
    "current_catalog",
    # operators
    "'a' ~ 'a'",
    "'a' ~* 'a'",
    "'{\"a\":1}'::jsonb @> '{}'",
    "'{\"a\":1}'::jsonb ? 'a'",
    "ARRAY[1] @> ARRAY[1]",
    "5 % 2",
    "'a' COLLATE \"C\"",
    # aggregates with FILTER, typed literals, casts, subscripts, rows
    "count(*) FILTER (WHERE true)",
    "sum(1) FILTER (WHERE true)",
    "interval '1 day'",
    "interval '1 day'::text",
    "1259::regclass::text",
    "now()::date",
    "CASE WHEN true THEN 1 END::text",
    "ARRAY[1]::text",
    "coalesce(1, 2)::text",
    "(ARRAY[1,2])[1]",
    "x.a[1] FROM (SELECT ARRAY[1] AS a) x",
    "(1, 2)",
]


@pytest.fixture(scope="module")
def conns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[psycopg.Connection, ...]]:
    with (
        pg_and_hatiproxy(tmp_path_factory.mktemp("colnames"), []) as (pg_dsn, hati_dsn),
        psycopg.connect(pg_dsn, autocommit=True) as a,
        psycopg.connect(hati_dsn, autocommit=True) as b,
    ):
        yield a, b


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_named_as_postgresql_names_it(
    conns: tuple[psycopg.Connection, ...], expression: str
) -> None:
    pg, hati = conns
    sql = f"SELECT {expression}"
    want = [d.name for d in pg.execute(sql).description or ()]
    assert [d.name for d in hati.execute(sql).description or ()] == want, sql


def test_order_by_a_function_s_output_name(conns: tuple[psycopg.Connection, ...]) -> None:
    """ORDER BY an output column's name finds it by PostgreSQL's name of the column."""
    sql = (
        "SELECT to_char(d, 'YYYY-MM') FROM (VALUES (date '2024-02-01'), (date '2023-05-01'))"
        " AS v(d) ORDER BY to_char"
    )
    for conn in conns:
        assert conn.execute(sql).fetchall() == [("2023-05",), ("2024-02",)]
