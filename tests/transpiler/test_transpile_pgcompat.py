"""Postgres compatibility rewrites for the wire clients."""

from __future__ import annotations

from datetime import timedelta

import duckdb
import pytest

from transpiler import transpile
from transpiler.stored_text import as_postgres


def sql(text: str) -> str:
    return transpile(text)[0].sql


@pytest.mark.parametrize(
    ("pg", "duck"),
    [
        # a returned reg* value goes out as its name; inside the query it is an oid
        ("SELECT 't'::regclass", "SELECT __HATI_REGCLASS_NAME(__HATI_REGCLASS('t')) AS regclass"),
        ("SELECT $1::regclass", "SELECT __HATI_REGCLASS_NAME(__HATI_REGCLASS($1)) AS regclass"),
        (
            "SELECT 1 FROM t WHERE 't'::regclass = 5",
            "SELECT 1 FROM t WHERE __HATI_REGCLASS('t') = 5",
        ),
        (
            "SELECT 'f'::regproc::oid",
            "SELECT CAST(__HATI_REGPROCEDURE('f') AS BIGINT)",
        ),
        (
            "SELECT c.oid::regclass FROM pg_class c",
            "SELECT __HATI_REGCLASS_NAME(c.oid) FROM pg_class AS c",
        ),
        ("SELECT 'int4'::regtype AS t", "SELECT __HATI_REGTYPE_NAME(__HATI_REGTYPE('int4')) AS t"),
        ("SELECT 't'::regclass::oid", "SELECT CAST(__HATI_REGCLASS('t') AS BIGINT)"),
        ("SELECT x::oid FROM t", "SELECT CAST(x AS BIGINT) FROM t"),
        ("SELECT * FROM public.t", "SELECT * FROM main.t"),
        ('SELECT * FROM "hatidata"."public"."t"', 'SELECT * FROM "main"."t"'),
        ('SELECT "db"."s"."t"."c" FROM "db"."s"."t"', 'SELECT "s"."t"."c" FROM "s"."t"'),
        ("SELECT * FROM system.main.duckdb_tables()", "SELECT * FROM system.main.DUCKDB_TABLES()"),
        ("SELECT pg_catalog.lower('A')", "SELECT LOWER('A')"),
        ("SELECT pg_catalog.pg_get_userbyid(10)", "SELECT __HATI_PG_GET_USERBYID(10)"),
        (
            "SELECT current_setting('server_version_num')",
            "SELECT COALESCE(GETVARIABLE('pg:server_version_num'), "
            "__HATI_CURRENT_SETTING('server_version_num'))",
        ),
        ("SELECT version()", "SELECT __HATI_VERSION()"),
        ("SELECT a OPERATOR(pg_catalog.~) 'x' FROM t", "SELECT REGEXP_MATCHES(a, 'x') FROM t"),
        (
            "SELECT a OPERATOR(pg_catalog.!~) 'x' FROM t",
            "SELECT NOT (REGEXP_MATCHES(a, 'x')) FROM t",
        ),
        ("SELECT a OPERATOR(pg_catalog.~~) 'x%' FROM t", "SELECT a LIKE 'x%' FROM t"),
        ("SELECT a FROM t ORDER BY a COLLATE pg_catalog.default", "SELECT a FROM t ORDER BY a"),
        ("SELECT a FROM t WHERE a = 'x' COLLATE \"C\"", "SELECT a FROM t WHERE a = 'x'"),
        (
            "SELECT current_timestamp AT TIME ZONE 'UTC'",
            "SELECT CURRENT_TIMESTAMP AT TIME ZONE 'UTC'",
        ),
        (
            "INSERT INTO t (k, c) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET c = EXCLUDED.c",
            "INSERT INTO t (k, c) VALUES ($1, $2) ON CONFLICT(k) DO UPDATE SET c = EXCLUDED.c",
        ),
        (  # DuckDB would read a bare CURRENT_TIMESTAMP here as a column (hatidata-agent sends it)
            "INSERT INTO t (k, u) VALUES (1, now()) ON CONFLICT (k) DO UPDATE SET u = now(), "
            "d = current_date",
            "INSERT INTO t (k, u) VALUES (1, CURRENT_TIMESTAMP) ON CONFLICT(k) DO UPDATE SET "
            "u = get_current_timestamp(), d = current_date()",
        ),
        # a function returning one value, in FROM: one row, the column named after it
        (
            "SELECT * FROM current_schema()",
            'SELECT * FROM (SELECT CURRENT_SCHEMA() AS "current_schema") AS "current_schema"',
        ),
        ("SELECT * FROM upper('x') t(c)", 'SELECT * FROM (SELECT UPPER(\'x\') AS "c") AS "t"'),
        (
            "SELECT * FROM t, generate_series(1, t.n) g",
            "SELECT * FROM t, GENERATE_SERIES(1, t.n) AS g(g)",
        ),
        # constant bounds: integer, as in PostgreSQL (series_from.py)
        (
            "SELECT * FROM generate_series(1, 2) g",
            'SELECT * FROM (SELECT CAST(generate_series AS INT) AS "g"'
            ' FROM GENERATE_SERIES(1, 2)) AS "g"',
        ),
        (
            "SELECT * FROM generate_series(1, 3000000000) AS g",  # bigint bounds: as written
            "SELECT * FROM GENERATE_SERIES(1, 3000000000) AS g(g)",  # the alias names its column
        ),
        # quoted schema qualifiers (TypeORM quotes every name)
        (
            'SELECT * FROM "information_schema"."tables"',
            'SELECT * FROM __hati_catalog.info."tables"',
        ),
        ('SELECT * FROM "pg_catalog"."pg_class" c', 'SELECT * FROM "pg_class" AS c'),
        # a name built by || is a name, not an oid; ::text of a reg* is its name
        (
            "SELECT obj_description((s || '.' || t)::regclass, 'pg_class') FROM x",
            "SELECT OBJ_DESCRIPTION(__HATI_REGCLASS(s || '.' || t), 'pg_class') FROM x",
        ),
        (
            "SELECT ('\"' || s || '\".\"' || n || '\"')::\"regtype\"::text FROM x",
            "SELECT CAST(__HATI_REGTYPE_NAME(__HATI_REGTYPE('\"' || s || '\".\"' || n || '\"')) "
            "AS TEXT) FROM x",
        ),
        # DEFAULT now() is kept as written (DuckDB keeps a default's text)
        (
            "CREATE TABLE t (a timestamptz DEFAULT now(), b timestamptz DEFAULT current_timestamp)",
            "CREATE TABLE t (a TIMESTAMPTZ DEFAULT NOW(), b TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP)",
        ),
        (
            "ALTER TABLE t ALTER COLUMN a SET DEFAULT now()",
            "ALTER TABLE t ALTER COLUMN a SET DEFAULT NOW()",
        ),
    ],
)
def test_rewrites(pg: str, duck: str) -> None:
    assert sql(pg) == duck


def test_stored_text_reads_back_as_postgresql() -> None:
    """Defaults, CHECKs and view queries as pg_get_expr / information_schema show them."""
    assert as_postgres("__hati_uuid_generate_v4()") == "uuid_generate_v4()"
    assert as_postgres("uuid()") == "gen_random_uuid()"
    assert as_postgres("concat('uuid()', __hati_catalog.pg.__hati_div(a, 2))") == (
        "concat('uuid()', (a / 2))"
    )
    assert as_postgres("my_uuid() + __hati_unknown(1)") == "my_uuid() + __hati_unknown(1)"


def test_public_in_string_literals_is_untouched() -> None:
    assert sql("SELECT 'public' AS s") == "SELECT 'public' AS s"


@pytest.mark.parametrize(
    ("pg", "expected"),
    [
        # PostgreSQL reads the whole string: days plus a time of day (sqlglot kept only
        # '1 day' of it), in literals, arithmetic and comparisons.
        ("SELECT INTERVAL '1 day 01:02:03.5'", timedelta(days=1, seconds=3723.5)),
        ("SELECT 2 * INTERVAL '1 day 01:02:03.5'", timedelta(days=2, seconds=7447)),
        ("SELECT INTERVAL '3 days 10:00' + INTERVAL '1 hour'", timedelta(days=3, hours=11)),
        ("SELECT INTERVAL '1 day 2 hours'", timedelta(days=1, hours=2)),
        ("SELECT INTERVAL '3 days'", timedelta(days=3)),
        ("SELECT INTERVAL '1.5 hours'", timedelta(minutes=90)),
        ("SELECT INTERVAL '1 day ago'", timedelta(days=-1)),
        # PostgreSQL's own abbreviations, as its output has them ('1 mon', '3 hrs')
        ("SELECT INTERVAL '2 mons'", timedelta(days=60)),
        ("SELECT INTERVAL '-1 mon' + INTERVAL '3 hrs'", timedelta(days=-30, hours=3)),
    ],
)
def test_interval_literals_keep_their_whole_text(pg: str, expected: timedelta) -> None:
    assert duckdb.sql(sql(pg)).fetchone() == (expected,)
