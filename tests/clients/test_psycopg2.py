"""psycopg2: client-side interpolation (simple Query only), execute_values, transactions, COPY."""

from __future__ import annotations

import datetime as dt
import io
import uuid
from collections.abc import Iterator
from decimal import Decimal

import psycopg2
import psycopg2.errors
import psycopg2.extensions
import psycopg2.extras
import pytest

psycopg2.extras.register_uuid()

UTC = dt.UTC

# (SQL type, value): psycopg2 writes each value as a literal into the query text.
LITERALS = [
    ("int4", 123),
    ("int8", -(2**62)),
    ("float8", 2.5e-10),
    ("numeric(12,3)", Decimal("-1234.567")),
    ("text", 'it\'s \\ a "test" ✓'),
    ("bytea", b"\x00\x01'\\\xff"),
    ("bool", True),
    ("date", dt.date(1999, 12, 31)),
    ("time", dt.time(13, 14, 15, 161718)),
    ("timestamp", dt.datetime(2022, 2, 22, 22, 22, 22, 222222)),
    ("timestamptz", dt.datetime(2022, 2, 22, 22, 22, 22, tzinfo=UTC)),
    ("interval", dt.timedelta(days=1, seconds=1, microseconds=1)),
    ("uuid", uuid.UUID("6f1e4f0a-9a36-4f0b-8a4a-2b8b5f6c7d8e")),
    ("int4[]", [1, 2, 3]),
    ("text[]", ["a", "b,c", 'd"e']),
]


@pytest.fixture
def conn(server) -> Iterator[psycopg2.extensions.connection]:
    c = psycopg2.connect(server.dsn)
    yield c
    c.close()


@pytest.mark.parametrize("sqltype,value", LITERALS, ids=[t for t, _ in LITERALS])
def test_interpolated_values_round_trip(conn, sqltype, value) -> None:
    with conn.cursor() as cur:
        cur.execute(f"SELECT %s::{sqltype}", (value,))
        got = cur.fetchone()[0]
    if isinstance(got, memoryview):
        got = got.tobytes()
    if sqltype == "timestamptz":
        assert got == value  # aware datetime; equality is across offsets
    else:
        assert got == value
        assert type(got) is type(value)
    conn.rollback()


def test_null_and_none(conn) -> None:
    with conn.cursor() as cur:
        cur.execute("SELECT %s::text, %s::int", (None, None))
        assert cur.fetchone() == (None, None)
    conn.rollback()


def test_execute_values_and_rowcount(conn, table_name) -> None:
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY, name text, at date)")
        rows = [(i, f"n'{i}", dt.date(2020, 1, 1) + dt.timedelta(days=i)) for i in range(300)]
        psycopg2.extras.execute_values(
            cur, f"INSERT INTO {table_name} VALUES %s", rows, page_size=100
        )
        cur.execute(f"SELECT * FROM {table_name} ORDER BY id")
        assert cur.fetchall() == rows
        assert cur.rowcount == 300
        ids = psycopg2.extras.execute_values(
            cur,
            f"UPDATE {table_name} AS t SET name = v.name FROM (VALUES %s) AS v(id, name) "
            "WHERE t.id = v.id RETURNING t.id",
            [(1, "one"), (2, "two")],
            fetch=True,
        )
        assert sorted(ids) == [(1,), (2,)]
        cur.execute(f"DELETE FROM {table_name} WHERE id >= %s", (100,))
        assert cur.rowcount == 200
        cur.execute(f"DROP TABLE {table_name}")
    conn.commit()


def test_transactions_and_failed_state(conn, table_name) -> None:
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        conn.commit()
        cur.execute(f"INSERT INTO {table_name} VALUES (1)")
        conn.rollback()
        cur.execute(f"INSERT INTO {table_name} VALUES (2)")
        conn.commit()
        cur.execute(f"INSERT INTO {table_name} VALUES (3)")
        with pytest.raises(psycopg2.errors.UniqueViolation):
            cur.execute(f"INSERT INTO {table_name} VALUES (2)")
        status = conn.get_transaction_status()
        assert status == psycopg2.extensions.TRANSACTION_STATUS_INERROR
        with pytest.raises(psycopg2.errors.InFailedSqlTransaction) as info:
            cur.execute("SELECT 1")
        assert info.value.pgcode == "25P02"
        conn.rollback()
        cur.execute(f"SELECT id FROM {table_name}")
        assert cur.fetchall() == [(2,)]
        cur.execute(f"DROP TABLE {table_name}")
    conn.commit()


def test_autocommit(server, table_name) -> None:
    a = psycopg2.connect(server.dsn)
    b = psycopg2.connect(server.dsn)
    try:
        a.autocommit = True
        b.autocommit = True
        with a.cursor() as ca, b.cursor() as cb:
            ca.execute(f"CREATE TABLE {table_name} (v text)")
            ca.execute(f"INSERT INTO {table_name} VALUES ('visible')")
            cb.execute(f"SELECT v FROM {table_name}")  # committed at once
            assert cb.fetchall() == [("visible",)]
            assert a.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_IDLE
            ca.execute(f"DROP TABLE {table_name}")
    finally:
        a.close()
        b.close()


def test_copy_expert_in_and_out(conn, table_name) -> None:
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {table_name} (id int, name text, note text)")
        data = io.StringIO("1\tone\t\\N\n2\ttab\\there\tx\n3\tback\\\\slash\t\n")
        cur.copy_expert(f"COPY {table_name} FROM STDIN", data)
        assert cur.rowcount == 3
        cur.copy_from(io.StringIO("4,four,y\n"), table_name, sep=",")
        cur.execute(f"SELECT * FROM {table_name} ORDER BY id")
        assert cur.fetchall() == [
            (1, "one", None),
            (2, "tab\there", "x"),
            (3, "back\\slash", ""),
            (4, "four", "y"),
        ]
        out = io.StringIO()
        cur.copy_expert(f"COPY (SELECT * FROM {table_name} ORDER BY id) TO STDOUT", out)
        assert out.getvalue() == "1\tone\t\\N\n2\ttab\\there\tx\n3\tback\\\\slash\t\n4\tfour\ty\n"
        out = io.StringIO()
        cur.copy_expert(f"COPY {table_name} TO STDOUT WITH (FORMAT csv, HEADER true)", out)
        assert out.getvalue().splitlines()[:2] == ["id,name,note", "1,one,"]
        cur.execute(f"DROP TABLE {table_name}")
    conn.commit()


def test_errors_and_notices(conn) -> None:
    with conn.cursor() as cur:
        with pytest.raises(psycopg2.errors.UndefinedTable) as info:
            cur.execute("SELECT * FROM no_such_table_pg2")
        assert info.value.pgcode == "42P01"
        assert "no_such_table_pg2" in info.value.pgerror
        conn.rollback()
        with pytest.raises(psycopg2.errors.SyntaxError):
            cur.execute("SELEC 1")
    conn.rollback()


def test_hatidata_agent_style_connection(server) -> None:
    """What HatiDataAgent sends: options with -c settings and an application_name."""
    c = psycopg2.connect(
        host=server.host,
        port=server.port,
        user="agent",
        dbname="hatidata",
        application_name="hatidata-agent/langchain",
        options="-c hatidata_agent_id=a1 -c hatidata_framework=langchain "
        "-c hatidata_priority=normal -c hatidata.environment=dev",
    )
    try:
        c.autocommit = True
        with c.cursor() as cur:
            for name, want in [
                ("hatidata_agent_id", "a1"),
                ("hatidata_framework", "langchain"),
                ("hatidata.environment", "dev"),
                ("application_name", "hatidata-agent/langchain"),
            ]:
                cur.execute(f"SHOW {name}")
                assert cur.fetchone() == (want,)
            cur.execute("SET hatidata_request_id = 'r-1'")
            cur.execute("SHOW hatidata_request_id")
            assert cur.fetchone() == ("r-1",)
            cur.execute("SET hatidata_request_id = ''")
            cur.execute("SHOW hatidata_request_id")
            assert cur.fetchone() == ("",)
    finally:
        c.close()


def test_current_setting_sees_session_set(server) -> None:
    c = psycopg2.connect(server.dsn, options="-c hatidata_agent_id=a1")
    try:
        c.autocommit = True
        with c.cursor() as cur:
            cur.execute("SET hatidata_request_id = 'r-1'")
            cur.execute("SET application_name = 'cs'")
            cur.execute(
                "SELECT current_setting('hatidata_request_id'), "
                "current_setting('application_name'), current_setting('hatidata_agent_id')"
            )
            assert cur.fetchone() == ("r-1", "cs", "a1")
    finally:
        c.close()
