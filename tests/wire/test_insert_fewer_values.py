"""INSERT with fewer values than the table has columns fills the first columns and gives
the rest their defaults, as in PostgreSQL (transpiler/insert_columns.py), over the wire:
prepared with typed parameters (asyncpg), after ALTER TABLE, and within a block that
changed the table, by the block's own columns."""

from __future__ import annotations

import asyncio

import asyncpg
import psycopg


def test_prepared_insert_with_fewer_values_after_alter(server, table_name: str) -> None:
    async def main() -> list:
        conn = await asyncpg.connect(
            host=server.host, port=server.port, user="tester", database="hatidata"
        )
        try:
            await conn.execute(f"CREATE TABLE {table_name} (id int, note text DEFAULT 'n/a')")
            insert = f"INSERT INTO {table_name} VALUES ($1)"
            await conn.executemany(insert, [(1,), (2,)])
            await conn.execute(f"ALTER TABLE {table_name} ADD COLUMN n int DEFAULT 7")
            await conn.execute(f"INSERT INTO {table_name} VALUES ($1, $2)", 3, "three")
            row = await conn.fetchrow(f"{insert} RETURNING *", 4)
            assert tuple(row) == (4, "n/a", 7)
            return [tuple(r) for r in await conn.fetch(f"SELECT * FROM {table_name} ORDER BY id")]
        finally:
            await conn.close()

    assert asyncio.run(main()) == [(1, "n/a", 7), (2, "n/a", 7), (3, "three", 7), (4, "n/a", 7)]


def test_a_block_that_changed_the_table_fills_its_own_columns(server, table_name: str) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (a int, b int, c int DEFAULT 3)")
        conn.execute("BEGIN")
        conn.execute(f"ALTER TABLE {table_name} DROP COLUMN a")
        conn.execute(f"ALTER TABLE {table_name} ADD COLUMN a int DEFAULT 9")  # now b, c, a
        # The catalog other sessions see still says a, b, c; the block's own says b, c, a,
        # and PostgreSQL fills the block's first column: 1 lands in b.
        conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        assert conn.execute(f"SELECT b, c, a FROM {table_name}").fetchall() == [(1, 3, 9)]
        conn.execute("ROLLBACK")
        assert conn.execute(f"SELECT a, b, c FROM {table_name}").fetchall() == []
        conn.execute(f"INSERT INTO {table_name} VALUES (1)")  # a, b, c again: 1 lands in a
        assert conn.execute(f"SELECT a, b, c FROM {table_name}").fetchall() == [(1, None, 3)]
