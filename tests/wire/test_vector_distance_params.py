"""pgvector distance operators with a bound parameter on a vector column whose size is not
the embedding model's (384): the parameter takes the column's declared size, with psycopg
(a list, pgvector's '[1,2,3]' text, a numpy array) and asyncpg."""

from __future__ import annotations

import asyncio

import asyncpg
import numpy as np
import psycopg
import pytest
from pgvector.asyncpg import register_vector
from pgvector.psycopg import register_vector as register_vector_psycopg

from tests.conftest import ServerProcess

ROWS = [(1, [1.0, 0.0, 0.0]), (2, [0.5, 1.0, 0.0]), (3, [0.9, 0.1, 0.0]), (4, [0.0, 0.0, 1.0])]


@pytest.fixture(params=["FLOAT[3]", "vector(3)"])
def table(server: ServerProcess, table_name: str, request: pytest.FixtureRequest) -> str:
    with psycopg.connect(server.dsn, autocommit=True) as con:
        con.execute(f"DROP TABLE IF EXISTS {table_name}")
        con.execute(f"CREATE TABLE {table_name} (id INT, e {request.param})")
        for i, v in ROWS:
            con.execute(f"INSERT INTO {table_name} VALUES ({i}, '{v}')")
    return table_name


@pytest.mark.parametrize(
    ("op", "nearest"), [("<->", [1, 3, 2]), ("<=>", [1, 3, 2]), ("<#>", [1, 3, 2])]
)
def test_psycopg_distance_parameter_takes_column_size(
    server: ServerProcess, table: str, op: str, nearest: list[int]
) -> None:
    sql = f"SELECT id FROM {table} ORDER BY e {op} %s LIMIT 3"
    with psycopg.connect(server.dsn, autocommit=True) as con:
        assert [r[0] for r in con.execute(sql, ([1.0, 0.0, 0.0],))] == nearest
        assert [r[0] for r in con.execute(sql, ("[1,0,0]",))] == nearest
        register_vector_psycopg(con)
        assert [r[0] for r in con.execute(sql, (np.array([1.0, 0.0, 0.0]),))] == nearest
        cast = f"SELECT id FROM {table} ORDER BY e {op} %s::vector LIMIT 3"
        assert [r[0] for r in con.execute(cast, ("[1,0,0]",))] == nearest


def test_asyncpg_distance_parameter_takes_column_size(server: ServerProcess, table: str) -> None:
    async def main() -> list[int]:
        conn = await asyncpg.connect(
            host=server.host, port=server.port, user="tester", database="hatidata"
        )
        try:
            await register_vector(conn)
            rows = await conn.fetch(
                f"SELECT id, e <-> $1 AS d FROM {table} ORDER BY e <-> $1 LIMIT 3",
                np.array([1.0, 0.0, 0.0]),
            )
            return [r["id"] for r in rows]
        finally:
            await conn.close()

    assert asyncio.run(main()) == [1, 3, 2]
