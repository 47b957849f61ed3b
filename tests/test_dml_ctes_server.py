"""Data-modifying WITH over the wire, beyond tests/differential/cases/dml_cte.sql (which
compares results with PostgreSQL 15): the extended protocol (Describe of the statement
before anything runs, parameters in the CTEs, a portal read in pieces), transaction
blocks, and the temp tables' names."""

from __future__ import annotations

import asyncio

import asyncpg
import psycopg
import pytest


def _run(coro):  # noqa: ANN001, ANN202
    return asyncio.run(coro)


def test_extended_protocol_describe_and_parameters(server, table_name) -> None:
    """asyncpg sends Parse / Describe (statement) before Bind / Execute: the columns of
    the main statement come first, typed by the DML CTE's RETURNING list, and nothing
    runs until Execute."""

    async def go() -> None:
        con = await asyncpg.connect(host=server.host, port=server.port, user="tester")
        try:
            await con.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY, v int)")
            await con.execute(f"CREATE TABLE {table_name}_b (a_id int, note text)")
            await con.execute(f"INSERT INTO {table_name} VALUES (1, 1), (2, 2), (3, 3)")
            query = (
                f"WITH u AS (UPDATE {table_name} SET v = v + $1 WHERE id > $2 RETURNING id, v) "
                "SELECT id, v, $3::text AS tag FROM u ORDER BY id"
            )
            prepared = await con.prepare(query)
            attrs = [(a.name, a.type.name) for a in prepared.get_attributes()]
            assert attrs == [("id", "int4"), ("v", "int4"), ("tag", "text")]
            assert [t.name for t in prepared.get_parameters()] == ["int4", "int4", "text"]
            rows = await con.fetch(f"SELECT v FROM {table_name} ORDER BY id")
            assert [r[0] for r in rows] == [1, 2, 3]  # Parse / Describe ran nothing
            rows = await prepared.fetch(10, 1, "x")
            assert [tuple(r) for r in rows] == [(2, 12, "x"), (3, 13, "x")]

            insert = (
                f"WITH ins AS (INSERT INTO {table_name} VALUES ($1, $2) RETURNING id) "
                f"INSERT INTO {table_name}_b SELECT id, $3 FROM ins"
            )
            prepared = await con.prepare(insert)
            assert prepared.get_attributes() == ()  # NoData: the main INSERT returns none
            status = await con.execute(insert, 7, 70, "seven")
            assert status == "INSERT 0 1"
            rows = await con.fetch(f"SELECT a_id, note FROM {table_name}_b")
            assert [tuple(r) for r in rows] == [(7, "seven")]
        finally:
            await con.close()

    _run(go())


def test_a_portal_read_in_pieces(server, table_name) -> None:
    """Execute with a row limit: the steps run once, the main statement resumes."""

    async def go() -> None:
        con = await asyncpg.connect(host=server.host, port=server.port, user="tester")
        try:
            await con.execute(f"CREATE TABLE {table_name} (id int)")
            query = (
                f"WITH ins AS (INSERT INTO {table_name} SELECT * FROM range(5) RETURNING id) "
                "SELECT id FROM ins ORDER BY id"
            )
            async with con.transaction():
                got = [r[0] async for r in con.cursor(query, prefetch=2)]
            assert got == [0, 1, 2, 3, 4]
            assert await con.fetchval(f"SELECT count(*) FROM {table_name}") == 5
        finally:
            await con.close()

    _run(go())


def test_failure_in_a_transaction_block_aborts_it(server, table_name) -> None:
    with psycopg.connect(server.dsn) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        conn.commit()
        conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(
                f"WITH ins AS (INSERT INTO {table_name} VALUES (2) RETURNING id) "
                f"INSERT INTO {table_name} SELECT id - 1 FROM ins"
            )
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (0,)


def test_a_failed_main_statement_undoes_the_steps(server, table_name) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute(f"WITH d AS (DELETE FROM {table_name} RETURNING id) SELECT id / 0 FROM d")
        assert conn.execute(f"SELECT id FROM {table_name}").fetchall() == [(1,)]


def test_names_do_not_collide(server, table_name) -> None:
    """A table the user named like the CTE stays out of it; the temp tables holding the
    RETURNING rows are the connection's own and gone after the statement."""
    with (
        psycopg.connect(server.dsn, autocommit=True) as conn,
        psycopg.connect(server.dsn, autocommit=True) as other,
    ):
        conn.execute(f"CREATE TABLE {table_name} (id int)")
        conn.execute(f"CREATE TABLE {table_name}_moved (id int)")
        conn.execute(f"INSERT INTO {table_name}_moved VALUES (100)")
        conn.execute(f"INSERT INTO {table_name} VALUES (1), (2)")
        rows = conn.execute(
            f"WITH {table_name}_moved AS (DELETE FROM {table_name} WHERE id = 1 RETURNING id) "
            f"SELECT id FROM {table_name}_moved"
        ).fetchall()
        assert rows == [(1,)]
        other.execute(f"INSERT INTO {table_name} VALUES (3)")
        rows = other.execute(
            f"WITH m AS (DELETE FROM {table_name} WHERE id = 3 RETURNING id) SELECT id FROM m"
        ).fetchall()
        assert rows == [(3,)]
        left = conn.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '__hati_cte%'"
        ).fetchone()
        assert left == (0,)


def test_refusals_name_the_case(server, table_name) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int)")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="modified by both"):
            conn.execute(
                f"WITH a AS (DELETE FROM {table_name} RETURNING id), "
                f"b AS (UPDATE {table_name} SET id = 2 RETURNING id) SELECT 1"
            )
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="read by the main"):
            conn.execute(
                f"WITH a AS (DELETE FROM {table_name} RETURNING id) SELECT * FROM {table_name}"
            )
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="EXPLAIN"):
            conn.execute(f"EXPLAIN WITH a AS (DELETE FROM {table_name} RETURNING id) SELECT 1")
        two = conn.execute(
            f"WITH a AS (INSERT INTO {table_name} VALUES (1) RETURNING id), "
            f"b AS (INSERT INTO {table_name} VALUES (2) RETURNING id) "
            "SELECT (SELECT id FROM a), (SELECT id FROM b)"
        ).fetchone()
        assert two == (1, 2)  # two plain INSERTs into one table: their rows add up


def test_a_view_over_a_modified_table_is_refused(server, table_name) -> None:
    """PostgreSQL's main statement would read the view's table as before the statement."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int)")
        conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        conn.execute(f"CREATE VIEW {table_name}_v AS SELECT id FROM {table_name}")
        conn.execute(f"CREATE VIEW {table_name}_vv AS SELECT id FROM {table_name}_v")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="through view"):
            conn.execute(
                f"WITH d AS (DELETE FROM {table_name} RETURNING id) "
                f"SELECT count(*) FROM {table_name}_vv"
            )
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (1,)


def test_rollback_to_a_later_savepoint_is_refused_not_wrong(server, table_name) -> None:
    """The SAVEPOINT emulation replays the block's earlier writes; a data-modifying
    WITH's kept rows are not among them, so the replay fails (40001) and the block is
    rolled back whole: nothing half-replayed stays."""
    with psycopg.connect(server.dsn) as conn:
        conn.execute(f"CREATE TABLE {table_name} (n int)")
        conn.execute(f"CREATE TABLE {table_name}_b (n int)")
        conn.execute(f"INSERT INTO {table_name} VALUES (1), (2)")
        conn.commit()
        conn.execute(
            f"WITH d AS (DELETE FROM {table_name} WHERE n = 1 RETURNING n) "
            f"INSERT INTO {table_name}_b SELECT n FROM d"
        )
        conn.execute("SAVEPOINT a")
        conn.execute(f"INSERT INTO {table_name}_b VALUES (9)")
        with pytest.raises(psycopg.errors.SerializationFailure):
            conn.execute("ROLLBACK TO SAVEPOINT a")
        conn.rollback()
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (2,)
        assert conn.execute(f"SELECT count(*) FROM {table_name}_b").fetchone() == (0,)
