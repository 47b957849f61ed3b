"""COPY ... TO STDOUT (text, CSV, binary) and large results, byte for byte against
PostgreSQL 15.

Tricky values (tabs, newlines, backslashes, control characters, quotes, empty strings,
NULLs, negative and zero decimals, BC and infinite dates and timestamps) are copied out of
the same table on both servers and the raw COPY bytes compared. Results of more rows than
the server sends by the per-value encoders (so they go through the Arrow path) are
compared as text and binary rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_and_hatiproxy

SETUP = [
    "CREATE TABLE copy_t (i integer, b bigint, s smallint, d numeric(15,2), d4 numeric(12,6),"
    " t text, v varchar(20), f boolean, dt date, ts timestamp, tz timestamptz, j jsonb,"
    " x double precision, r real)",
    "INSERT INTO copy_t VALUES"
    " (1, -9223372036854775807, -32768, -0.05, 0.000001, E'tab\\there', 'new\\nline', true,"
    "  '2024-02-29', '2024-01-01 12:00:00.5', '2024-01-01 00:00:00.000001+00', '{\"a\": 1}',"
    "  0.1, 1.5),"
    " (2, 0, 0, 0, -123456.789012, E'back\\\\slash\\r', '', false, '0044-03-15',"
    "  '1999-12-31 23:59:59', '2038-01-19 03:14:08+00', '[1, \"x\\ty\"]', 1e300, -0.25),"
    " (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
    " (4, 42, 7, 12345678901.23, 1, E'q\"uo,te\\b\\f', 'a;b|c', true, '2000-01-01',"
    "  '2000-01-01 00:00:00', '1970-01-01 00:00:00+00', 'null', -2.5e-5, 3e30),"
    " (5, 1, 1, 1, 1, '\\N', '\\.', NULL, '9999-12-31', '0001-01-01 00:00:00',"
    "  '2000-06-15 08:30:00+00', '{}', 1e15, 0)",
    # DuckDB's infinities (the vectorised path sends them as PostgreSQL's)
    "CREATE TABLE copy_inf (i integer, dt date, ts timestamp, tz timestamptz)",
    "INSERT INTO copy_inf VALUES (1, 'infinity', '-infinity', 'infinity'),"
    " (2, '-infinity', 'infinity', '-infinity'), (3, NULL, NULL, NULL)",
    # enough rows for the vectorised path (more than one batch of per-value rows)
    "CREATE TABLE copy_big AS SELECT g::integer AS i, ((g * 7) / 4.0)::numeric(15,2) AS d,"
    " 'row ' || g AS s, DATE '2020-01-01' + g::int AS dt, g % 3 = 0 AS f,"
    " (DATE '2021-01-01' + g::int)::timestamp AS ts"
    " FROM generate_series(1, 3000) AS s(g)",
    # several Arrow batches (8,192 rows each): NULLs in some only, escapes in the last ones,
    # negative and zero decimals short and long, one-letter flags and dates (fixed width)
    "CREATE TABLE copy_many AS SELECT g::integer AS i, (g * 37 - 300000)::bigint AS b,"
    " CASE WHEN g % 9 = 0 THEN NULL"
    "  ELSE (((g * 7919) % 2000000 - 1000000)::numeric(15,0) * 0.01)::numeric(15,2) END AS d,"
    " ((g % 1000 - 500)::numeric(5,0) * 0.01)::numeric(5,2) AS d5,"
    " CASE WHEN g > 15000 AND g % 5 = 0 THEN E'a\\tb\\\\c\\n' ELSE 'r' || g END AS s,"
    " CASE WHEN g % 2 = 0 THEN 'A' ELSE 'B' END AS f, DATE '2000-01-01' + g::int AS dt,"
    " CASE WHEN g BETWEEN 9000 AND 9100 THEN NULL ELSE DATE '1990-01-01' + g::int END AS dn,"
    " g % 3 = 0 AS ok FROM generate_series(1, 20000) AS s(g)",
]
FORMATS = [
    "",
    "(FORMAT csv)",
    "(FORMAT csv, HEADER true)",
    "(FORMAT binary)",
    "(FORMAT csv, NULL 'NULL', DELIMITER ';')",
    "(DELIMITER '|', NULL '')",
    "(FORMAT csv, QUOTE '*', ESCAPE '\\', NULL 'a;b|c')",
    "(FORMAT csv, QUOTE '''')",  # the quote is "'", doubled inside its string literal
]
# Floats go by the per-value path; the rest by Arrow when every column has an encoder.
QUERIES = [
    "SELECT * FROM copy_t ORDER BY i",
    "SELECT i, b, s, d, d4, t, v, f, dt, ts, tz, j FROM copy_t ORDER BY i",
    "SELECT i, d, t FROM copy_t ORDER BY i",
    "SELECT * FROM copy_big ORDER BY i",
    "SELECT * FROM copy_inf ORDER BY i",
]


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with pg_and_hatiproxy(tmp_path_factory.mktemp("copyout"), SETUP) as dsns:
        yield dsns


def _copy(dsn: str, sql: str) -> bytes:
    with (
        psycopg.connect(dsn, autocommit=True, options="-c TimeZone=UTC") as conn,
        conn.cursor() as cur,
        cur.copy(sql) as copy,  # type: ignore[arg-type]
    ):
        return b"".join(bytes(block) for block in copy)


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("options", FORMATS)
def test_copy_to_stdout_bytes_match_postgres(
    sides: tuple[str, str], query: str, options: str
) -> None:
    sql = f"COPY ({query}) TO STDOUT {options}"
    pg, hati = (_copy(dsn, sql) for dsn in sides)
    assert hati == pg, f"{sql}\nPostgreSQL: {pg[:600]!r}\nhatiproxy:  {hati[:600]!r}"


# first columns of each shape the encoders frame differently: a number, a fixed-width
# flag, a short DECIMAL, a string, a DECIMAL with NULLs
MANY = [
    "SELECT * FROM copy_many ORDER BY i",
    "SELECT f, dt, ok, d5, b FROM copy_many ORDER BY i",
    "SELECT d5, f, dt, dn, i FROM copy_many ORDER BY i",
    "SELECT s, d, d5 FROM copy_many ORDER BY i",
    "SELECT d, i, f FROM copy_many ORDER BY i",
]


@pytest.mark.parametrize("query", MANY)
@pytest.mark.parametrize("options", ["", "(FORMAT csv)", "(FORMAT binary)", FORMATS[4]])
def test_copy_messages_of_a_long_result_match_postgres(
    sides: tuple[str, str], query: str, options: str
) -> None:
    """Over several batches: the same CopyData messages (one a row, as psycopg's
    Copy.rows() reads them), in the query's order."""
    sql = f"COPY ({query}) TO STDOUT {options}"
    got = []
    for dsn in sides:
        with (
            psycopg.connect(dsn, autocommit=True, options="-c TimeZone=UTC") as conn,
            conn.cursor() as cur,
            cur.copy(sql) as copy,  # type: ignore[arg-type]
        ):
            got.append([bytes(block) for block in copy])
    pg, hati = got
    assert len(pg) >= 20_000
    assert hati == pg


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("query", QUERIES[:-1] + MANY)  # psycopg has no Python date for infinity
def test_result_rows_match_postgres(sides: tuple[str, str], query: str, binary: bool) -> None:
    results = []
    for dsn in sides:
        with (
            psycopg.connect(dsn, autocommit=True, options="-c TimeZone=UTC") as conn,
            conn.cursor(binary=binary) as cur,
        ):
            cur.execute(query)  # type: ignore[arg-type]
            results.append(cur.fetchall())
    pg, hati = results
    assert hati == pg


def test_server_side_cursor_pages_through_a_large_result(sides: tuple[str, str]) -> None:
    """A named cursor reads a long result in pages (portal suspension mid-batch)."""
    pages = []
    for dsn in sides:
        with psycopg.connect(dsn, options="-c TimeZone=UTC") as conn:
            with conn.cursor("c") as cur:
                cur.execute("SELECT * FROM copy_big ORDER BY i")
                got = []
                while page := cur.fetchmany(700):
                    got.append(page)
            pages.append(got)
    assert pages[1] == pages[0]


@pytest.mark.parametrize("option", ["QUOTE ''", "QUOTE 'ab'", "ESCAPE ''"])
def test_copy_csv_quote_and_escape_must_be_one_byte(sides: tuple[str, str], option: str) -> None:
    errors = []
    for dsn in sides:
        with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
            with pytest.raises(psycopg.Error) as info:
                cur.execute(f"COPY (SELECT 1) TO STDOUT (FORMAT csv, {option})")  # type: ignore[arg-type]
            errors.append((info.value.sqlstate, str(info.value).splitlines()[0]))
    assert errors[1] == errors[0]


# The query of COPY (<query>) TO STDOUT means what it means as a SELECT (ADBC and
# ConnectorX read every result this way): PostgreSQL's forms in it are transpiled.
PG_FORMS = [
    "SELECT 2.5::numeric AS n, 100::numeric AS m, count(*) AS c, sum(b) AS s FROM copy_t",
    "SELECT i, 7 / 2 AS q FROM copy_t WHERE i = ANY('{1,4}') ORDER BY i",
    "SELECT typname FROM pg_type WHERE typreceive <> 0 AND typname IN ('int4', 'text') ORDER BY 1",
    "SELECT k FROM generate_subscripts(ARRAY[5, 6, 7], 1) AS k ORDER BY k",
]


@pytest.mark.parametrize("query", PG_FORMS)
@pytest.mark.parametrize("options", ["", "(FORMAT binary)"])
def test_copy_query_is_postgresql_sql(sides: tuple[str, str], query: str, options: str) -> None:
    sql = f"COPY ({query}) TO STDOUT {options}"
    pg, hati = (_copy(dsn, sql) for dsn in sides)
    assert hati == pg, f"{sql}\nPostgreSQL: {pg[:600]!r}\nhatiproxy:  {hati[:600]!r}"


def test_copy_query_division_by_zero_is_22012(sides: tuple[str, str]) -> None:
    for dsn in sides:
        with pytest.raises(psycopg.errors.DivisionByZero):
            _copy(dsn, "COPY (SELECT 1 / 0) TO STDOUT (FORMAT binary)")
