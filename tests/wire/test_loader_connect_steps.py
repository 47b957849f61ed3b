"""What data loaders (dlt, pgloader) do on connect and load, against PostgreSQL 15: a
search_path naming a schema that does not exist yet (dlt connects with `options=-c
search_path=<dataset>` and then creates it), and COPY ... FROM STDIN CSV with FORCE_NULL /
FORCE_NOT_NULL column lists (dlt's csv loader: a quoted empty string of a date is NULL)."""

from __future__ import annotations

from datetime import date

import psycopg

from tests.conftest import ServerProcess

PATH_STEPS = [
    "SHOW search_path",
    "CREATE SCHEMA loader_ds",
    "CREATE TABLE loader_t (a int)",  # goes into loader_ds, now first on the path
    "SELECT table_schema FROM information_schema.tables WHERE table_name = 'loader_t'",
    "SET search_path = loader_none, public",
    "SHOW search_path",
    "BEGIN",
    "CREATE SCHEMA loader_none",
    "ROLLBACK",  # loader_none is gone again
    "CREATE TABLE loader_u (a int)",  # loader_none does not exist: public
    "SELECT table_schema FROM information_schema.tables WHERE table_name = 'loader_u'",
    "SELECT pg_typeof(1)::text",  # the catalog stays on the path
    "DROP SCHEMA loader_ds CASCADE",
    "CREATE TABLE loader_v (a int)",
    "SELECT table_schema FROM information_schema.tables WHERE table_name = 'loader_v'",
    "SELECT count(*) FROM pg_class WHERE relname = 'loader_v'",
]

COPY_SQL = (
    "COPY loader_c (id, note, d) FROM STDIN WITH (FORMAT CSV, DELIMITER ',', NULL '', "
    'FORCE_NULL("id","d"), FORCE_NOT_NULL(note), ENCODING \'utf-8\')'
)
COPY_DATA = '1,"say ""hi""",2024-02-03\n2,,""\n"",x,\n'


def _path_steps(dsn: str) -> list[object]:
    out: list[object] = []
    options = "-c search_path=loader_ds,public"
    with psycopg.connect(dsn, autocommit=True, options=options) as conn:
        for sql in PATH_STEPS:
            cur = conn.execute(sql)  # type: ignore[call-overload]
            out.append(cur.fetchall() if cur.description else cur.statusmessage)
        conn.execute("DROP TABLE loader_u, loader_v")
    return out


def _copy(dsn: str) -> list[object]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE loader_c (id int, note text, d date)")
        try:
            with conn.cursor().copy(COPY_SQL) as copy:  # type: ignore[arg-type]
                copy.write(COPY_DATA)
            return conn.execute("SELECT * FROM loader_c ORDER BY id, note").fetchall()
        finally:
            conn.execute("DROP TABLE loader_c")


def test_search_path_with_missing_schema_and_force_null_as_postgresql(
    server: ServerProcess,
) -> None:
    from tests.differential.pgcluster import start_pg

    pg = start_pg()
    try:
        expected = (_path_steps(pg.dsn), _copy(pg.dsn))
    finally:
        pg.stop()
    # (what PostgreSQL 15 says)
    assert expected[0][0] == [("loader_ds,public",)]
    assert expected[0][3] == [("loader_ds",)] and expected[0][10] == [("public",)]
    assert expected[1] == [(1, 'say "hi"', date(2024, 2, 3)), (2, "", None), (None, "x", None)]
    assert (_path_steps(server.dsn), _copy(server.dsn)) == expected
