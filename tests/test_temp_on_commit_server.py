"""CREATE TEMP TABLE ... ON COMMIT DROP / DELETE ROWS / PRESERVE ROWS over the wire, the
same calls against PostgreSQL 15 (proxy/pgserver/temp_on_commit.py)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import ServerProcess
from tests.differential.pgcluster import PgCluster, start_pg


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster]:
    cluster = start_pg()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["hati", "pg"])
def dsn(request: pytest.FixtureRequest, server: ServerProcess, pg: PgCluster) -> str:
    return server.dsn if request.param == "hati" else pg.dsn


def _rows(c: psycopg.Connection, sql: str) -> list[tuple]:
    return c.execute(sql).fetchall()


def test_on_commit_drop_in_a_block_and_outside(dsn: str) -> None:
    with psycopg.connect(dsn) as c:  # psycopg opens a block at the first statement
        c.execute("CREATE TEMP TABLE oc_stage (id int, v text) ON COMMIT DROP")
        c.execute("INSERT INTO oc_stage VALUES (1, 'a'), (2, 'b')")
        assert _rows(c, "SELECT count(*) FROM oc_stage") == [(2,)]
        c.commit()
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("SELECT * FROM oc_stage")
        c.rollback()
        # ROLLBACK of the block that made it: gone too; the name is free again
        c.execute("CREATE TEMP TABLE oc_stage (id int) ON COMMIT DROP")
        c.rollback()
        c.execute("CREATE TEMP TABLE oc_stage ON COMMIT DROP AS SELECT 1 AS id")
        assert _rows(c, "SELECT id FROM oc_stage") == [(1,)]
        c.commit()
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("SELECT * FROM oc_stage")
    with psycopg.connect(dsn, autocommit=True) as c:
        # outside a block the CREATE is its own transaction: dropped at once
        c.execute("CREATE TEMP TABLE oc_once (a int) ON COMMIT DROP")
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("SELECT * FROM oc_once")
        # several statements in one Query are one transaction
        c.execute(
            "CREATE TEMP TABLE oc_once (a int) ON COMMIT DROP; INSERT INTO oc_once VALUES (7)"
        )
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("SELECT * FROM oc_once")
        c.execute("CREATE TEMP TABLE oc_once (a int)")  # the name is free, the table kept
        c.execute("INSERT INTO oc_once VALUES (1)")
        assert _rows(c, "SELECT a FROM oc_once") == [(1,)]
        c.execute("CREATE TEMP TABLE oc_like (LIKE oc_once) ON COMMIT DROP")  # the server's DDL
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("SELECT * FROM oc_like")


def test_on_commit_delete_rows_and_preserve_rows(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("CREATE TEMP TABLE oc_del (a int) ON COMMIT DELETE ROWS")
        c.execute("CREATE TEMP TABLE oc_keep (a int) ON COMMIT PRESERVE ROWS")
        c.execute("INSERT INTO oc_del VALUES (1)")  # committed on its own: emptied
        c.execute("INSERT INTO oc_keep VALUES (1)")
        assert _rows(c, "SELECT count(*) FROM oc_del") == [(0,)]
        assert _rows(c, "SELECT count(*) FROM oc_keep") == [(1,)]
        c.execute("BEGIN")
        c.execute("INSERT INTO oc_del VALUES (2), (3)")
        assert _rows(c, "SELECT count(*) FROM oc_del") == [(2,)]  # until the block ends
        c.execute("COMMIT")
        assert _rows(c, "SELECT count(*) FROM oc_del") == [(0,)]
        c.execute("BEGIN")
        c.execute("INSERT INTO oc_del VALUES (4)")
        c.execute("ROLLBACK")
        assert _rows(c, "SELECT count(*) FROM oc_del") == [(0,)]
        c.execute("INSERT INTO oc_del VALUES (5); SELECT 1")
        assert _rows(c, "SELECT count(*) FROM oc_del") == [(0,)]
        c.execute("BEGIN")
        c.execute("INSERT INTO oc_del VALUES (6)")
        # the table stays: it is only emptied
        assert _rows(c, "SELECT a FROM oc_del") == [(6,)]
        c.execute("COMMIT")
        assert _rows(c, "SELECT a FROM oc_del") == []


def test_on_commit_needs_a_temporary_table(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        with pytest.raises(psycopg.errors.InvalidTableDefinition) as err:
            c.execute("CREATE TABLE oc_plain (a int) ON COMMIT DROP")
        assert str(err.value).splitlines()[0] == "ON COMMIT can only be used on temporary tables"
