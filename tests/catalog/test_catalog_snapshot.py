"""pg_class, pg_attribute, pg_constraint, ... are read from a per-connection snapshot
(proxy/db/catalog/snapshot.py): every catalog change must still show at once, to the
session that made it (inside its transaction too), to every other session, and after a
ROLLBACK the rolled-back change must be gone."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import ServerProcess

TABLES = "SELECT relname FROM pg_class WHERE relname LIKE 'snap%' AND relkind = 'r' ORDER BY 1"
COLUMNS = (
    "SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
    "WHERE c.relname = %s AND a.attnum > 0 ORDER BY a.attnum"
)


def names(conn: psycopg.Connection, sql: str, *args: str) -> list[str]:
    return [r[0] for r in conn.execute(sql, args or None).fetchall()]


@pytest.fixture
def pair(server: ServerProcess) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    opts = "-c hatidata_agent_id=snapper"
    with (
        psycopg.connect(server.dsn, autocommit=True, options=opts) as a,
        psycopg.connect(server.dsn, autocommit=True, options=opts) as b,
    ):
        yield a, b


def test_other_sessions_ddl_shows_at_once(pair: tuple[psycopg.Connection, ...]) -> None:
    a, b = pair
    assert names(a, TABLES) == []
    b.execute("CREATE TABLE snap_one (id int PRIMARY KEY, v text)")
    assert names(a, TABLES) == ["snap_one"]
    b.execute("ALTER TABLE snap_one ADD COLUMN w int")
    assert names(a, COLUMNS, "snap_one") == ["id", "v", "w"]
    b.execute("COMMENT ON COLUMN snap_one.v IS 'the value'")
    assert a.execute("SELECT col_description('snap_one'::regclass, 2)").fetchone() == ("the value",)
    b.execute("ALTER TABLE snap_one ADD CONSTRAINT snap_one_v UNIQUE (v)")
    cons = "SELECT conname FROM pg_constraint WHERE conrelid = 'snap_one'::regclass ORDER BY 1"
    assert names(a, cons) == ["snap_one_pkey", "snap_one_v"]
    b.execute("DROP TABLE snap_one")
    assert names(a, TABLES) == []


def test_own_transaction_sees_its_ddl_and_rollback_undoes_it(
    pair: tuple[psycopg.Connection, ...],
) -> None:
    a, b = pair
    a.execute("CREATE TABLE snap_kept (id int)")
    assert names(a, TABLES) == ["snap_kept"]
    a.execute("BEGIN")
    a.execute("CREATE TABLE snap_new (id int)")
    a.execute("DROP TABLE snap_kept")
    assert names(a, TABLES) == ["snap_new"]  # its own uncommitted DDL
    assert names(b, TABLES) == ["snap_kept"]  # not another session's
    a.execute("ROLLBACK")
    assert names(a, TABLES) == ["snap_kept"]
    # the same catalog as inside the rolled-back block, now committed
    a.execute("DROP TABLE snap_kept")
    assert names(a, TABLES) == []
    assert names(b, TABLES) == []


def test_snapshots_are_not_listed_as_temp_tables(pair: tuple[psycopg.Connection, ...]) -> None:
    a, _ = pair
    a.execute("SELECT count(*) FROM pg_attribute").fetchone()
    a.execute("CREATE TEMP TABLE snap_temp (id int)")
    temp = (
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname LIKE 'pg_temp%' ORDER BY 1"
    )
    assert names(a, temp) == ["snap_temp"]
    listed = "SELECT table_name FROM information_schema.tables WHERE table_type = 'LOCAL TEMPORARY'"
    assert names(a, listed) == ["snap_temp"]


def test_agent_function_ddl_shows_at_once(pair: tuple[psycopg.Connection, ...]) -> None:
    """A branch's relations (made by the agent layer, not by a SQL statement of a session)
    are in pg_class as soon as the call returns."""
    a, b = pair
    a.execute("CREATE TABLE snap_acct (id int PRIMARY KEY, balance int)")
    a.execute("INSERT INTO snap_acct VALUES (1, 10)")
    spaces = (
        "SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relname = 'snap_acct' ORDER BY 1"
    )
    assert names(a, spaces) == ["public"]
    (schema,) = b.execute("SELECT schema_name FROM branch_create('snap-what-if')").fetchone()
    assert names(a, spaces) == sorted(["public", schema])
