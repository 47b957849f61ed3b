"""Nothing a client saw acknowledged is lost: SQL writes survive `kill -9` of the server.

Each way of writing over the wire (autocommit, an explicit block, the extended protocol's
pipeline, COPY FROM STDIN, DDL) is acknowledged, the server is killed without a shutdown
or checkpoint, and a new server on the same file must show every acknowledged change and
none of the rolled-back or unfinished ones.
"""

from __future__ import annotations

import signal
from pathlib import Path

import psycopg

from tests.conftest import ServerProcess, start_server


def _kill(srv: ServerProcess) -> None:
    srv.proc.send_signal(signal.SIGKILL)  # no shutdown, no checkpoint
    srv.proc.wait(10)


def test_acknowledged_sql_writes_survive_kill_9(tmp_path: Path) -> None:
    db = str(tmp_path / "wire.duckdb")
    srv = start_server(tmp_path / "one", "--database", db)
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (id integer PRIMARY KEY, note text)")
            conn.execute("INSERT INTO kept VALUES (1, 'autocommit')")
            with conn.transaction():
                conn.execute("INSERT INTO kept VALUES (2, 'block')")
                conn.execute("UPDATE kept SET note = 'updated' WHERE id = 1")
            with conn.cursor() as cur:
                cur.executemany(  # psycopg 3 pipelines these in the extended protocol
                    "INSERT INTO kept VALUES (%s, %s)", [(i, f"many-{i}") for i in range(3, 53)]
                )
                with cur.copy("COPY kept (id, note) FROM STDIN") as copy:
                    for i in range(100, 1100):
                        copy.write_row((i, f"copied-{i}"))
            conn.execute("ALTER TABLE kept ADD COLUMN extra integer DEFAULT 7")
            conn.execute("DELETE FROM kept WHERE id = 52")
            with conn.transaction(force_rollback=True):
                conn.execute("INSERT INTO kept VALUES (9999, 'rolled back', 1)")
        unfinished = psycopg.connect(srv.dsn)  # a block left open at the kill
        unfinished.execute("INSERT INTO kept VALUES (8888, 'never committed', 1)")
    finally:
        _kill(srv)

    unfinished.close()
    srv = start_server(tmp_path / "two", "--database", db)
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as conn:
            rows = dict(conn.execute("SELECT id, note FROM kept").fetchall())
            assert rows[1] == "updated" and rows[2] == "block"
            assert [rows[i] for i in (3, 51)] == ["many-3", "many-51"]
            assert 52 not in rows and 9999 not in rows and 8888 not in rows
            assert sum(1 for i in rows if 100 <= i < 1100) == 1000
            assert len(rows) == 2 + 49 + 1000
            extra = conn.execute("SELECT DISTINCT extra FROM kept").fetchall()
            assert extra == [(7,)]
    finally:
        srv.proc.terminate()
        srv.proc.wait(10)


def test_acknowledged_prepared_inserts_survive_kill_9(tmp_path: Path) -> None:
    """asyncpg's prepared INSERT (Bind, Execute, Sync in one packet) commits in its own
    hop, without a block (statement_start.plan): acknowledged, it is on disk."""
    import asyncio

    import asyncpg

    db = str(tmp_path / "prepared.duckdb")
    srv = start_server(tmp_path / "one", "--database", db)

    async def write() -> None:
        conn = await asyncpg.connect(host=srv.host, port=srv.port, user="tester", database="x")
        await conn.execute("CREATE TABLE kept (conn integer, n integer, v text)")
        for i in range(200):
            await conn.execute("INSERT INTO kept (conn, n, v) VALUES ($1, $2, $3)", 0, i, "v")
        await conn.close()

    try:
        asyncio.run(write())
    finally:
        _kill(srv)
    srv = start_server(tmp_path / "two", "--database", db)
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as conn:
            row = conn.execute("SELECT count(*), count(DISTINCT n), max(n) FROM kept").fetchone()
            assert row == (200, 200, 199)
    finally:
        srv.proc.terminate()
        srv.proc.wait(10)
