"""One PostgreSQL statement the transpiler makes several (an ALTER TABLE with several
actions) over the extended protocol: one Parse, one Execute, one CommandComplete, all
or nothing (proxy/pgserver/statement_parts.py). Several statements in one Parse stay
42601 as in PostgreSQL. LangGraph's PostgresStore sends its TTL migration this way."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import ServerProcess


def _connect(server: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(server.dsn, autocommit=True)


def _columns(conn: psycopg.Connection, table: str) -> list[tuple]:
    return conn.execute(
        "SELECT column_name, is_nullable, column_default FROM information_schema.columns "
        "WHERE table_name = %s ORDER BY ordinal_position",
        [table],
    ).fetchall()


def test_several_actions_in_one_prepared_statement(server: ServerProcess, table_name: str) -> None:
    with _connect(server) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        sql = (
            f"ALTER TABLE {table_name} ADD COLUMN IF NOT EXISTS a timestamptz, "
            "ADD COLUMN IF NOT EXISTS b int NOT NULL DEFAULT 7"
        )
        cur = conn.execute(sql, prepare=True)  # Parse / Bind / Execute: one statement
        assert cur.statusmessage == "ALTER TABLE"
        assert _columns(conn, table_name) == [
            ("id", "NO", None),
            ("a", "YES", None),
            ("b", "NO", "7"),
        ]
        assert conn.execute(f"SELECT id, a, b FROM {table_name}").fetchall() == [(1, None, 7)]
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute(sql, prepare=True)  # both exist: skipped, each with its notice
        assert notices == [
            f'column "{c}" of relation "{table_name}" already exists, skipping' for c in "ab"
        ]


def test_a_failing_part_leaves_none_done(server: ServerProcess, table_name: str) -> None:
    with _connect(server) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int)")
        conn.execute(f"INSERT INTO {table_name} VALUES (1), (1)")
        with pytest.raises(psycopg.Error) as err:
            conn.execute(
                f"ALTER TABLE {table_name} ADD COLUMN a int, ADD COLUMN b text, ADD UNIQUE (id)",
                prepare=True,
            )
        assert err.value.sqlstate == "23505"
        assert [c[0] for c in _columns(conn, table_name)] == ["id"]  # a and b rolled back
        with conn.transaction():  # inside a block: the parts are the block's
            conn.execute(
                f"ALTER TABLE {table_name} ADD COLUMN c int, ADD COLUMN d int", prepare=True
            )
        assert [c[0] for c in _columns(conn, table_name)] == ["id", "c", "d"]


def test_several_statements_in_one_parse_are_refused(server: ServerProcess) -> None:
    with _connect(server) as conn, pytest.raises(psycopg.Error) as err:
        conn.execute("SELECT 1; SELECT 2", prepare=True)
    assert err.value.sqlstate == "42601"
    assert "cannot insert multiple commands into a prepared statement" in str(err.value)
