"""API keys and CREATE DATABASE: owner records and the organisation boundary of keys are
the default database's (proxy/db/databases.py), so a key may neither create, drop nor
connect to another database; superusers may. What a key reaches stays where it was."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.rest.rest_support import KeyedServer
from tests.security.ownership_support import connect, keyed_server, mcp_query


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    yield from keyed_server(tmp_path_factory)


def test_keys_neither_create_nor_drop_databases(ks: KeyedServer) -> None:
    with connect(ks, "root") as root, connect(ks, "adma") as admin:
        root.execute("CREATE DATABASE rootdb")
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege, match="permission denied to create database"
        ):
            admin.execute("CREATE DATABASE keydb")
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege, match="must be owner of database rootdb"
        ):
            admin.execute("DROP DATABASE rootdb")
        bad, text = mcp_query(ks, "adma", "CREATE DATABASE mcpdb")
        assert bad and "CREATE DATABASE needs a wire connection" in text
        names = [r[0] for r in root.execute("SELECT datname FROM pg_database ORDER BY oid")]
        assert names == ["hatidata", "rootdb"]
        root.execute("DROP DATABASE rootdb")


def test_a_key_cannot_connect_to_a_created_database(ks: KeyedServer) -> None:
    with connect(ks, "root") as root:
        root.execute("CREATE DATABASE private_db")
        try:
            with connect(ks, "root", "private_db") as inside:
                inside.execute("CREATE TABLE secret (v text)")
                inside.execute("INSERT INTO secret VALUES ('s')")
            with pytest.raises(
                psycopg.OperationalError, match='permission denied for database "private_db"'
            ):
                connect(ks, "alice", "private_db")
            # a name nobody created still reaches the default database, where the table is not
            with connect(ks, "alice", "anything") as alice:
                assert alice.execute("SELECT current_database()").fetchone() == ("hatidata",)
                with pytest.raises(psycopg.errors.UndefinedTable):
                    alice.execute("SELECT * FROM secret")
        finally:
            root.execute("DROP DATABASE private_db WITH (FORCE)")
