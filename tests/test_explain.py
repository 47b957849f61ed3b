"""EXPLAIN over the wire has Postgres's shape: one text column "QUERY PLAN", a row per line.

The shape (column name, type, one row per line; FORMAT JSON as one row) is compared
with a real PostgreSQL 15; the plan text itself is DuckDB's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import asyncpg
import psycopg
import pytest

from tests.differential.pgcluster import start_pg

TEXT_OID = 25
JSON_OID = 114


@pytest.fixture(scope="module")
def pg_dsn() -> Iterator[str]:
    cluster = start_pg()
    yield cluster.dsn
    cluster.stop()


@pytest.fixture(scope="module")
def dsns(server, pg_dsn: str) -> Iterator[dict[str, str]]:  # noqa: ANN001 - conftest fixture
    both = {"hatiproxy": server.dsn, "postgres": pg_dsn}
    for dsn in both.values():
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS explain_t")
            conn.execute("CREATE TABLE explain_t (a int, b text)")
            conn.execute("INSERT INTO explain_t SELECT i, 'x' || i FROM generate_series(1, 50) i")
    yield both


def _shape(cur: psycopg.Cursor) -> tuple[list[tuple[str, int]], list[tuple]]:
    assert cur.description is not None
    return [(d.name, d.type_code) for d in cur.description], cur.fetchall()


@pytest.mark.parametrize(
    "sql",
    [
        "EXPLAIN SELECT * FROM explain_t WHERE a > 1 ORDER BY b",
        "EXPLAIN ANALYZE SELECT count(*) FROM explain_t",
        "explain analyze select * from explain_t join explain_t u using (a)",
    ],
)
def test_text_plan_is_one_row_per_line(dsns: dict[str, str], sql: str) -> None:
    for name, dsn in dsns.items():
        with psycopg.connect(dsn, autocommit=True) as conn:
            columns, rows = _shape(conn.execute(sql))
            assert columns == [("QUERY PLAN", TEXT_OID)], name
            assert len(rows) > 1, (name, rows)
            assert all(len(r) == 1 and isinstance(r[0], str) and "\n" not in r[0] for r in rows)
            assert conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_json_plan_is_one_row(dsns: dict[str, str]) -> None:
    for name, dsn in dsns.items():
        with psycopg.connect(dsn, autocommit=True) as conn:
            columns, rows = _shape(conn.execute("EXPLAIN (FORMAT JSON) SELECT a FROM explain_t"))
            assert columns == [("QUERY PLAN", JSON_OID)] and len(rows) == 1, name
            assert isinstance(rows[0][0], list), (name, rows)  # psycopg parsed the json


def test_hatiproxy_plan_is_duckdbs(server) -> None:  # noqa: ANN001
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        lines = [r[0] for r in conn.execute("EXPLAIN SELECT * FROM explain_t WHERE a > 1")]
        assert any("SEQ_SCAN" in line or "TABLE_SCAN" in line for line in lines), lines
        analyzed = [r[0] for r in conn.execute("EXPLAIN ANALYZE SELECT count(*) FROM explain_t")]
        assert any("Total Time" in line for line in analyzed), analyzed


def test_prepared_explain_is_described_like_postgres(dsns: dict[str, str]) -> None:
    """Extended protocol: Describe of the statement names QUERY PLAN before Execute, and
    the parameter's type comes from the explained query (asyncpg binds an int)."""

    async def run(dsn: str) -> tuple[list[str], list[str], int]:
        kw = dict(part.split("=", 1) for part in dsn.split())
        conn = await asyncpg.connect(
            host=kw["host"], port=int(kw["port"]), user=kw["user"], database=kw["dbname"]
        )
        try:
            stmt = await conn.prepare("EXPLAIN SELECT b FROM explain_t WHERE a = $1")
            rows = await stmt.fetch(7)
            params = [t.name for t in stmt.get_parameters()]
            return [a.name for a in stmt.get_attributes()], params, len(rows)
        finally:
            await conn.close()

    for name, dsn in dsns.items():
        columns, params, count = asyncio.run(run(dsn))
        assert columns == ["QUERY PLAN"] and params == ["int4"] and count > 1, name
    with psycopg.connect(dsns["hatiproxy"], autocommit=True) as conn:
        cur = conn.execute("EXPLAIN SELECT b FROM explain_t WHERE a = %s", [7], prepare=True)
        assert _shape(cur)[0] == [("QUERY PLAN", TEXT_OID)]
