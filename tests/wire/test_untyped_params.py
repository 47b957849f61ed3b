"""An untyped parameter (OID 0) nothing types: PostgreSQL 15 refuses the Parse with 42P18
`could not determine data type of parameter $n` (pg_typeof($1), concat($1, ...),
$1 IS NULL, ...); one typed elsewhere in the statement, or sent typed, still works."""

from __future__ import annotations

import asyncio
import datetime as dt

import asyncpg
import psycopg
import pytest

from tests.conftest import ServerProcess
from transpiler.indeterminate_params import indeterminate, untyped_param

REFUSED = [
    "SELECT pg_typeof($1)",
    "SELECT concat($1, 'a')",
    "SELECT concat_ws(',', $1)",
    "SELECT format('%s', $1)",
    "SELECT num_nulls($1)",
    "SELECT count($1)",
    "SELECT $1 IS NULL",
    "SELECT ($1) IS NOT NULL",
    "SELECT $1 IS NOT DISTINCT FROM NULL",
]
TYPED = [
    "SELECT $1",
    "SELECT coalesce($1, $1)",
    "SELECT $1 = $1",
    "SELECT 1 LIMIT $1",
    "SELECT pg_typeof($1::int)",
    "SELECT format($1, 1)",
    "SELECT relname FROM pg_class WHERE relname = $1 OR $1 IS NULL",
]


def test_which_parameters_nothing_types() -> None:
    assert [indeterminate(q) for q in REFUSED] == [[1]] * len(REFUSED)
    assert [indeterminate(q) for q in TYPED] == [[]] * len(TYPED)
    assert indeterminate("SELECT pg_typeof($2), $1 IS NULL, $1 + 1") == [2]
    assert untyped_param("SELECT pg_typeof($1)", [23]) is None  # sent typed
    assert untyped_param("SELECT pg_typeof($1)", [0]) == 1


def _parse(conn: psycopg.Connection, sql: str) -> str | None:
    res = conn.pgconn.prepare(b"", sql.encode(), [0])
    if res.status == psycopg.pq.ExecStatus.COMMAND_OK:
        return None
    field = res.error_field(psycopg.pq.DiagnosticField.SQLSTATE)
    return (field or b"").decode() + " " + res.error_message.decode().split("\n")[0]


def test_parse_answers_as_postgresql(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for sql in REFUSED:
            assert _parse(conn, sql) == (
                "42P18 ERROR:  could not determine data type of parameter $1"
            ), sql
        for sql in TYPED:
            assert _parse(conn, sql) is None, sql
        # psycopg sends a str untyped: refused; typed (a date) it runs
        with pytest.raises(psycopg.errors.IndeterminateDatatype):
            conn.execute("SELECT pg_typeof(%s)", ["x"])
        assert conn.execute("SELECT pg_typeof(%s)::text", [dt.date(2024, 1, 2)]).fetchone() == (
            "date",
        )
        assert conn.execute("SELECT 1").fetchone() == (1,)  # the connection still works


def test_asyncpg(server: ServerProcess) -> None:
    async def go() -> None:
        conn = await asyncpg.connect(
            host=server.host, port=server.port, user="me", database="hatidata"
        )
        try:
            with pytest.raises(asyncpg.exceptions.IndeterminateDatatypeError):
                await conn.fetchval("SELECT pg_typeof($1)", "x")
            assert await conn.fetchval("SELECT $1::int IS NULL", None) is True
        finally:
            await conn.close()

    asyncio.run(go())
