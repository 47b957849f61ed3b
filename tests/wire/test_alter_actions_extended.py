"""A several-action ALTER TABLE over the extended protocol (proxy/pgserver/statement_parts.py):
psycopg's prepared statements and asyncpg (which prepares everything) send `ALTER TABLE t
ADD COLUMN a int, ADD COLUMN b text` as one Parse. The same steps run on PostgreSQL 15 and
on hatiproxy: the columns and constraints afterwards, and which steps fail (a failing
action undoes the actions before it, in or out of a transaction block), are the same."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import start_pg

STEPS = [
    "ALTER TABLE w_alt ADD COLUMN a int, ADD COLUMN b text",
    "ALTER TABLE w_alt ADD COLUMN c int DEFAULT 1, ALTER COLUMN a SET NOT NULL",  # 23502
    "ALTER TABLE w_alt ADD COLUMN e int, ADD CONSTRAINT w_alt_e CHECK (e > 0)",
    "ALTER TABLE w_alt DROP COLUMN b, ADD COLUMN d int DEFAULT 4",
    "ALTER TABLE w_alt ADD COLUMN f int, ADD COLUMN g int REFERENCES w_nosuch (id)",  # 42P01
]
COLUMNS = (
    "SELECT column_name, data_type, column_default FROM information_schema.columns"
    " WHERE table_name = 'w_alt' ORDER BY ordinal_position"
)
CONSTRAINTS = "SELECT conname, contype FROM pg_constraint WHERE conrelid = 'w_alt'::regclass"


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ServerProcess]]:
    pg = start_pg()
    srv = start_server(Path(tmp_path_factory.mktemp("alt")), "--database", ":memory:")
    try:
        yield pg.dsn, srv
    finally:
        srv.stop()
        pg.stop()


def _psycopg_steps(dsn: str) -> list:
    out: list = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS w_alt")
        conn.execute("CREATE TABLE w_alt (id int PRIMARY KEY)")
        conn.execute("CREATE INDEX w_alt_id ON w_alt (id)")
        conn.execute("INSERT INTO w_alt VALUES (1)")
        for sql in STEPS:
            try:
                conn.execute(sql, prepare=True)
                out.append("ok")
            except psycopg.Error as exc:
                out.append(exc.sqlstate)
        with conn.transaction():  # in a block: the actions join it
            conn.execute("ALTER TABLE w_alt ADD COLUMN h int, ADD COLUMN i text", prepare=True)
            conn.execute("INSERT INTO w_alt (id, a, h, i) VALUES (%s, %s, %s, %s)", (2, 2, 3, "x"))
        with pytest.raises(psycopg.errors.DivisionByZero), conn.transaction():
            conn.execute("ALTER TABLE w_alt ADD COLUMN j int, ADD COLUMN k int", prepare=True)
            conn.execute("SELECT 1 / 0")  # the block fails: neither column is kept
        out.append(conn.execute(COLUMNS).fetchall())
        out.append(sorted(conn.execute(CONSTRAINTS).fetchall()))
        out.append(conn.execute("SELECT * FROM w_alt ORDER BY id").fetchall())
    return out


def test_psycopg_prepared(sides: tuple[str, ServerProcess]) -> None:
    pg, srv = sides
    expected = _psycopg_steps(pg)
    assert expected[:5] == ["ok", "23502", "ok", "ok", "42P01"]
    assert _psycopg_steps(srv.dsn) == expected


def _url(dsn: str) -> str:
    kv = dict(part.split("=", 1) for part in dsn.split())
    return f"postgresql://{kv['user']}@{kv['host']}:{kv['port']}/{kv['dbname']}"


async def _asyncpg_steps(dsn: str) -> list:
    conn = await asyncpg.connect(_url(dsn))
    try:
        await conn.execute("DROP TABLE IF EXISTS w_alt2")
        await conn.execute("CREATE TABLE w_alt2 (id serial PRIMARY KEY)")
        # asyncpg prepares a statement with arguments; fetch() prepares even without
        await conn.fetch("ALTER TABLE w_alt2 ADD COLUMN a int, ADD COLUMN b text DEFAULT 'x'")
        await conn.execute("INSERT INTO w_alt2 (a) VALUES ($1)", 7)
        return [
            [tuple(r) for r in await conn.fetch(COLUMNS.replace("w_alt", "w_alt2"))],
            [tuple(r) for r in await conn.fetch("SELECT * FROM w_alt2")],
        ]
    finally:
        await conn.close()


def test_asyncpg(sides: tuple[str, ServerProcess]) -> None:
    pg, srv = sides
    expected = asyncio.run(_asyncpg_steps(pg))
    assert asyncio.run(_asyncpg_steps(srv.dsn)) == expected
