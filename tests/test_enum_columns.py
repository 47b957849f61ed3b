"""User ENUM columns are described with their enum's oid (mood, _mood for mood[]), as
PostgreSQL does, and drivers still read their values as text (psycopg: strings, asyncpg:
its enum codec via pg_type's typtype 'e'). Array text written to an array column is
read as the column's type."""

from __future__ import annotations

import asyncio

import asyncpg
import psycopg

from tests.conftest import ServerProcess


def test_enum_columns_described_and_read_as_text(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TYPE e_feel AS ENUM ('low', 'it''s ok', 'high')")
        conn.execute("CREATE TABLE e_feel_t (id int, f e_feel, fs e_feel[])")
        conn.execute("INSERT INTO e_feel_t VALUES (1, %s, %s)", ["high", ["low", "it's ok"]])
        oid, array_oid = conn.execute(
            "SELECT oid, typarray FROM pg_type WHERE typname = 'e_feel'"
        ).fetchone()
        cur = conn.execute("SELECT f, fs FROM e_feel_t")
        assert [d.type_code for d in cur.description] == [oid, array_oid]
        # psycopg does not know these oids: PostgreSQL's text, as with PostgreSQL
        assert cur.fetchone() == ("high", '{low,"it\'s ok"}')
        atttypids = conn.execute(
            "SELECT atttypid FROM pg_attribute WHERE attrelid = 'e_feel_t'::regclass "
            "AND attnum > 1 ORDER BY attnum"
        ).fetchall()
        assert atttypids == [(oid,), (array_oid,)]
        conn.execute("CREATE TABLE e_arr_t (a integer[], b text[])")
        conn.execute("INSERT INTO e_arr_t VALUES ('{1,2}', %s)", ['{x,"y z",NULL}'])
        conn.execute("UPDATE e_arr_t SET a = %s", ["{3,4}"])
        assert conn.execute("SELECT a, b FROM e_arr_t").fetchone() == ([3, 4], ["x", "y z", None])

    async def with_asyncpg() -> list[asyncpg.Record]:
        conn = await asyncpg.connect(server.url("postgresql"))
        try:  # parameters for enum and enum[] columns: labels, a list of labels
            await conn.execute("INSERT INTO e_feel_t VALUES (2, $1, $2)", "low", ["high"])
            return await conn.fetch("SELECT f, fs FROM e_feel_t ORDER BY id")
        finally:
            await conn.close()

    rows = asyncio.run(with_asyncpg())
    assert [tuple(r) for r in rows] == [("high", ["low", "it's ok"]), ("low", ["high"])]
