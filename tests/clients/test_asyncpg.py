"""asyncpg: prepared statements, inferred parameter types, binary types, pools, COPY, cursors."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

import asyncpg
import numpy as np
import pytest
from pgvector.asyncpg import register_vector

UTC = dt.UTC


def run(server, body: Callable[[asyncpg.Connection], Awaitable[Any]]) -> Any:
    """Run `body(conn)` on a fresh asyncpg connection to the test server."""

    async def main() -> Any:
        conn = await asyncpg.connect(
            host=server.host, port=server.port, user="tester", database="hatidata"
        )
        try:
            return await body(conn)
        finally:
            await conn.close()

    return asyncio.run(main())


# (SQL type, value) pairs asyncpg encodes and decodes in binary.
BINARY_TYPES = [
    ("int2", 32000),
    ("int4", -7),
    ("int8", 2**60),
    ("float4", 0.25),
    ("float8", -1e300),
    ("numeric(20,6)", Decimal("123456789.000123")),
    ("text", "naïve ☃ text"),
    ("bytea", b"\x00\xff\x10"),
    ("bool", False),
    ("date", dt.date(2000, 1, 1)),
    ("time", dt.time(7, 8, 9, 10)),
    ("timestamp", dt.datetime(2021, 3, 4, 5, 6, 7, 8)),
    ("timestamptz", dt.datetime(2021, 3, 4, 5, 6, 7, 8, tzinfo=UTC)),
    ("interval", dt.timedelta(days=-2, seconds=5, microseconds=1)),
    ("uuid", uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
    ("int4[]", [1, None, 3]),
    ("text[]", ["x", "y z"]),
    ("float8[]", [0.5, 1.5]),
]


@pytest.mark.parametrize("sqltype,value", BINARY_TYPES, ids=[t for t, _ in BINARY_TYPES])
def test_binary_round_trip(server, sqltype, value) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        assert await conn.fetchval(f"SELECT $1::{sqltype}", value) == value

    run(server, body)


def test_json_and_vectors(server, table_name) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        assert await conn.fetchval("""SELECT '{"a": [1, 2]}'::json""") == '{"a": [1, 2]}'
        assert await conn.fetchval("""SELECT '{"b": true}'::jsonb""") in (
            '{"b": true}',
            '{"b":true}',
        )
        await conn.execute(f"CREATE TABLE {table_name} (id int, emb FLOAT[3])")
        await conn.execute(f"INSERT INTO {table_name} VALUES (1, [0.5, 0.25, -1.0])")
        # pgvector's vector: asyncpg has no codec of its own for it, so text, as from
        # PostgreSQL with pgvector; pgvector.asyncpg.register_vector gives numpy arrays.
        assert await conn.fetchval(f"SELECT emb FROM {table_name}") == "[0.5,0.25,-1]"
        await register_vector(conn)
        emb = await conn.fetchval(f"SELECT emb FROM {table_name}")
        assert isinstance(emb, np.ndarray) and emb.tolist() == [0.5, 0.25, -1.0]
        await conn.execute(f"DROP TABLE {table_name}")

    run(server, body)


@pytest.mark.parametrize("column", ["vector(3)", "FLOAT[3]"], ids=["vector", "float_array"])
def test_vector_parameters(server, column, table_name) -> None:
    """A vector column's parameters are described as pgvector's vector, as PostgreSQL
    does: with pgvector.asyncpg.register_vector lists and numpy arrays go in (binary
    vector_send); pgvector's text '[...]' goes in through a text parameter."""

    async def body(conn: asyncpg.Connection) -> None:
        await register_vector(conn)
        await conn.execute(f"CREATE TABLE {table_name} (id int, e {column})")
        ins = f"INSERT INTO {table_name} VALUES ($1, {{}})"
        for n, placeholder in enumerate(
            ("$2", "$2::vector", "$2::vector(3)", "CAST($2 AS vector)")
        ):
            stmt = await conn.prepare(ins.format(placeholder))
            assert [t.name for t in stmt.get_parameters()][1] == "vector"
            await stmt.fetch(n, [1.0, 0.0, 0.5] if n % 2 else np.array([1.0, 0.0, 0.5]))
        for n, text in enumerate(("[1.0, 0.0, 0.5]", " [1,0,5e-1] ", "[1, -0, .5]"), start=10):
            await conn.execute(ins.format("$2::text::vector"), n, text)
        await conn.execute(f"INSERT INTO {table_name} VALUES (20, '[1.0, 0.0, 0.5]'::vector)")
        rows = await conn.fetch(f"SELECT id, e FROM {table_name} ORDER BY id")
        assert [r["id"] for r in rows] == [0, 1, 2, 3, 10, 11, 12, 20]
        assert all(r["e"].tolist() == [1.0, 0.0, 0.5] for r in rows)
        got = await conn.fetchval(
            f"SELECT count(*) FROM {table_name} WHERE e = $1::vector", [1.0, 0.0, 0.5]
        )
        assert got == 8
        with pytest.raises(asyncpg.InvalidTextRepresentationError):
            await conn.execute(ins.format("$2::text::vector"), 99, "[1,x,3]")
        await conn.execute(f"DROP TABLE {table_name}")

    run(server, body)


def test_inferred_parameters_and_prepared_reuse(server, table_name) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        await conn.execute(
            f"CREATE TABLE {table_name} (id int PRIMARY KEY, name text, score double, d date)"
        )
        # No casts: the server infers $1..$4 from the column types.
        status = await conn.execute(
            f"INSERT INTO {table_name} VALUES ($1, $2, $3, $4)", 1, "one", 1.5, dt.date(2020, 1, 1)
        )
        assert status == "INSERT 0 1"
        await conn.execute(f"INSERT INTO {table_name} (id, name) VALUES ($1, $2)", 2, "two")
        stmt = await conn.prepare(f"SELECT name, score FROM {table_name} WHERE id = $1")
        assert [a.name for a in stmt.get_parameters()] == ["int4"]
        assert [a.name for a in stmt.get_attributes()] == ["name", "score"]
        for _ in range(3):  # reused, not re-parsed
            assert await stmt.fetchrow(1) == ("one", 1.5)
            assert await stmt.fetchrow(2) == ("two", None)
            assert await stmt.fetchrow(3) is None
        assert (
            await conn.fetchval(
                f"SELECT count(*) FROM {table_name} WHERE name LIKE $1 AND d < $2",
                "o%",
                dt.date(2021, 1, 1),
            )
            == 1
        )
        status = await conn.execute(f"UPDATE {table_name} SET score = $1 WHERE id = $2", 9.5, 2)
        assert status == "UPDATE 1"
        assert await conn.fetchval(f"DELETE FROM {table_name} WHERE id > $1", 0) is None
        await conn.execute(f"DROP TABLE {table_name}")

    run(server, body)


def test_errors_have_sqlstate(server, table_name) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        with pytest.raises(asyncpg.UndefinedTableError):
            await conn.fetch("SELECT * FROM no_such_table_asyncpg")
        with pytest.raises(asyncpg.PostgresSyntaxError):
            await conn.fetch("SELEC 1")
        await conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        await conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        with pytest.raises(asyncpg.UniqueViolationError) as info:
            await conn.execute(f"INSERT INTO {table_name} VALUES ($1)", 1)
        assert info.value.sqlstate == "23505"
        assert await conn.fetchval("SELECT 1") == 1
        await conn.execute(f"DROP TABLE {table_name}")

    run(server, body)


def test_executemany_is_atomic(server, table_name) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        await conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY, v text)")
        await conn.executemany(
            f"INSERT INTO {table_name} VALUES ($1, $2)", [(i, f"v{i}") for i in range(100)]
        )
        assert await conn.fetchval(f"SELECT count(*) FROM {table_name}") == 100
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.executemany(
                f"INSERT INTO {table_name} VALUES ($1, $2)", [(1000, "new"), (5, "dup")]
            )
        # As in Postgres the failing batch leaves nothing behind.
        assert await conn.fetchval(f"SELECT count(*) FROM {table_name}") == 100
        await conn.execute(f"DROP TABLE {table_name}")

    run(server, body)


def test_transactions(server, table_name) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        await conn.execute(f"CREATE TABLE {table_name} (id int)")
        async with conn.transaction():
            await conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        with pytest.raises(RuntimeError):
            async with conn.transaction():
                await conn.execute(f"INSERT INTO {table_name} VALUES (2)")
                raise RuntimeError("boom")
        tr = conn.transaction(isolation="serializable", readonly=False)
        await tr.start()
        await conn.execute(f"INSERT INTO {table_name} VALUES (3)")
        with pytest.raises(asyncpg.UndefinedTableError):
            await conn.execute("SELECT * FROM no_such_table_tx")
        with pytest.raises(asyncpg.InFailedSQLTransactionError):
            await conn.execute("SELECT 1")
        await tr.rollback()
        rows = await conn.fetch(f"SELECT id FROM {table_name}")
        assert [r["id"] for r in rows] == [1]
        await conn.execute(f"DROP TABLE {table_name}")

    run(server, body)


def test_pool_acquire_release_cycles(server) -> None:
    async def main() -> None:
        pool = await asyncpg.create_pool(
            host=server.host, port=server.port, user="tester", database="hatidata",
            min_size=2, max_size=4,
        )  # fmt: skip
        try:

            async def one(i: int) -> int:
                async with pool.acquire() as conn:
                    await conn.execute("SET application_name = 'pooled'")
                    return await conn.fetchval("SELECT $1::int * 2", i)

            for _ in range(5):  # every release runs asyncpg's reset query
                results = await asyncio.gather(*(one(i) for i in range(20)))
                assert results == [i * 2 for i in range(20)]
            async with pool.acquire() as conn:
                assert await conn.fetchval("SHOW application_name") == ""  # RESET ALL ran
        finally:
            await pool.close()

    asyncio.run(main())


def test_reset_query_runs(server) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        await conn.execute("SELECT pg_advisory_unlock_all();\nCLOSE ALL;\nUNLISTEN *;\nRESET ALL;")

    run(server, body)


def test_copy_records_and_copy_to_table(server, table_name, tmp_path) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        await conn.execute(
            f"CREATE TABLE {table_name} (id int, name text, ts timestamp, price numeric(8,2))"
        )
        records = [
            (i, f"name {i}", dt.datetime(2024, 1, 1, 0, 0, i), Decimal(f"{i}.25"))
            for i in range(50)
        ]
        records.append((50, None, None, None))
        status = await conn.copy_records_to_table(table_name, records=records)
        assert status == "COPY 51"
        rows = await conn.fetch(f"SELECT * FROM {table_name} ORDER BY id")
        assert [tuple(r) for r in rows] == records
        path = tmp_path / "in.csv"
        path.write_text("100,from file,2024-02-02 10:00:00,9.99\n101,,,\n")
        status = await conn.copy_to_table(
            table_name, source=str(path), format="csv", columns=["id", "name", "ts", "price"]
        )
        assert status == "COPY 2"
        row = await conn.fetchrow(f"SELECT * FROM {table_name} WHERE id = 100")
        assert tuple(row) == (100, "from file", dt.datetime(2024, 2, 2, 10), Decimal("9.99"))
        out = tmp_path / "out.csv"
        status = await conn.copy_from_query(
            f"SELECT id, name FROM {table_name} WHERE id >= 100 ORDER BY id",
            output=str(out),
            format="csv",
        )
        assert status == "COPY 2"
        assert out.read_text() == "100,from file\n101,\n"
        await conn.execute(f"DROP TABLE {table_name}")

    run(server, body)


def test_cursor_uses_portal_row_limits(server, table_name) -> None:
    async def body(conn: asyncpg.Connection) -> None:
        async with conn.transaction():
            seen = [r[0] async for r in conn.cursor("SELECT i FROM range(250) t(i)", prefetch=40)]
            assert seen == list(range(250))
            await conn.execute(f"CREATE TEMP TABLE {table_name} AS SELECT i FROM range(100) t(i)")
            cur = await conn.cursor(f"SELECT i FROM {table_name} WHERE i >= $1 ORDER BY i", 10)
            assert [r[0] for r in await cur.fetch(5)] == [10, 11, 12, 13, 14]
            await cur.forward(10)
            assert (await cur.fetchrow())[0] == 25

    run(server, body)


def test_server_settings_and_show(server) -> None:
    async def main() -> None:
        conn = await asyncpg.connect(
            host=server.host, port=server.port, user="tester", database="hatidata",
            server_settings={"hatidata_agent_id": "x", "application_name": "app"},
        )  # fmt: skip
        try:
            assert await conn.fetchval("SHOW hatidata_agent_id") == "x"
            assert await conn.fetchval("SHOW application_name") == "app"
            assert conn.get_server_version().major == 15
        finally:
            await conn.close()

    asyncio.run(main())


def test_bare_numeric_keeps_its_scale(server) -> None:
    """Postgres numeric without a typmod is unconstrained: no rounding to 3 decimals."""

    async def body(conn: asyncpg.Connection) -> None:
        assert await conn.fetchval("SELECT $1::numeric", Decimal("1.000123")) == Decimal("1.000123")

    run(server, body)


def test_parameter_next_to_table_function_column_needs_a_cast(server) -> None:
    # Parameter types are inferred from table columns; a table function's columns are
    # not known before DuckDB binds, so such a parameter stays text unless cast.
    async def body(conn: asyncpg.Connection) -> None:
        rows = await conn.fetch("SELECT i FROM range(5) t(i) WHERE i >= $1::bigint", 3)
        assert [r[0] for r in rows] == [3, 4]
        with pytest.raises(asyncpg.DataError, match="expected str"):
            await conn.fetch("SELECT i FROM range(5) t(i) WHERE i >= $1", 3)

    run(server, body)


def test_catalog_char_columns_are_bytes(server) -> None:
    """pg_type.typtype and other "char" catalog columns arrive as bytes, as from
    PostgreSQL (asyncpg's own introspection compares them with b'b', b'c', b'd')."""

    async def body(conn: asyncpg.Connection) -> tuple:
        kind = await conn.fetchval("SELECT t.typtype AS k FROM pg_type t WHERE typname = 'int4'")
        kinds = await conn.fetchval(
            "SELECT array_agg(DISTINCT relkind) FROM pg_class WHERE relname = 'pg_type'"
        )
        # A codec set by name goes through asyncpg's type lookup (typtype as "kind").
        await conn.set_type_codec(
            "int4", encoder=str, decoder=lambda v: f"<{v}>", schema="pg_catalog", format="text"
        )
        return kind, kinds, await conn.fetchval("SELECT 42::int4")

    assert run(server, body) == (b"b", [b"r"], "<42>")
