"""API keys and CREATE DATABASE (proxy/db/databases.py, proxy/pgserver/databases.py): an
organisation's admin key creates a database that is then its organisation's -- that
organisation's keys connect to it, no other key does, only its admin keys drop or rename
it or copy it as a TEMPLATE; inside it nothing of another organisation can be named (it
is another DuckDB instance), so the boundary is the database itself. A superuser's
databases stay closed to keys. What a key reaches elsewhere stays where it was."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import start_server
from tests.rest.rest_support import KeyedServer
from tests.security.ownership_support import ARGS, connect, keyed_server, mcp_query


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    yield from keyed_server(tmp_path_factory)


def _refused(ks: KeyedServer, who: str, database: str) -> None:
    with pytest.raises(
        psycopg.OperationalError, match=f'permission denied for database "{database}"'
    ):
        connect(ks, who, database)


def test_only_admin_keys_create_and_only_their_organisation_drops(ks: KeyedServer) -> None:
    with connect(ks, "root") as root, connect(ks, "adma") as adma, connect(ks, "alice") as alice:
        root.execute("CREATE DATABASE rootdb")
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege, match="permission denied to create database"
        ):
            alice.execute("CREATE DATABASE agentdb")  # an agent key, not an admin one
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege, match="must be owner of database rootdb"
        ):
            adma.execute("DROP DATABASE rootdb")
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege,
            match='permission denied to copy database "rootdb"',
        ):
            adma.execute("CREATE DATABASE stolen TEMPLATE rootdb")
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege,
            match='permission denied to copy database "hatidata"',
        ):
            adma.execute("CREATE DATABASE stolen TEMPLATE hatidata")  # every organisation's
        adma.execute("CREATE DATABASE orga_db")
        with connect(ks, "adm") as admb:  # orgb's admin key
            for sql in (
                "DROP DATABASE orga_db",
                "ALTER DATABASE orga_db RENAME TO mine",
            ):
                with pytest.raises(
                    psycopg.errors.InsufficientPrivilege, match="must be owner of database orga_db"
                ):
                    admb.execute(sql)
            with pytest.raises(
                psycopg.errors.InsufficientPrivilege,
                match='permission denied to copy database "orga_db"',
            ):
                admb.execute("CREATE DATABASE copy_of_a TEMPLATE orga_db")
            with pytest.raises(psycopg.errors.InvalidCatalogName):
                admb.execute("DROP DATABASE no_such_db")  # existence first, as PostgreSQL
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege, match="must be owner of database orga_db"
        ):
            alice.execute("DROP DATABASE orga_db")  # its organisation's, but not an admin key
        bad, text = mcp_query(ks, "adma", "CREATE DATABASE mcpdb")
        assert bad and "CREATE DATABASE needs a wire connection" in text
        names = [r[0] for r in root.execute("SELECT datname FROM pg_database ORDER BY oid")]
        assert names == ["hatidata", "rootdb", "orga_db"]
        adma.execute("ALTER DATABASE orga_db RENAME TO orga_db2")
        adma.execute("DROP DATABASE orga_db2")
        root.execute("DROP DATABASE rootdb")


def test_an_organisations_database_is_its_keys_alone(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice:  # orga's table in the default database
        alice.execute("CREATE TABLE IF NOT EXISTS shared_name (v text)")
    with connect(ks, "adm") as admb:
        admb.execute("CREATE DATABASE orgb_work")
    try:
        with connect(ks, "bob", "orgb_work") as bob:
            assert bob.execute("SELECT current_database()").fetchone() == ("orgb_work",)
            # orga owns shared_name in the default database: no matter here
            bob.execute("CREATE TABLE shared_name (v text)")
            bob.execute("INSERT INTO shared_name VALUES ('b-secret')")
            bob.execute("CREATE VIEW v AS SELECT upper(v) AS u FROM shared_name")
            assert bob.execute("SELECT u FROM v").fetchall() == [("B-SECRET",)]
            bob.execute("VACUUM ANALYZE shared_name")
            # still a key: no server files, no other database file
            for sql in (
                "SELECT * FROM read_csv('/etc/passwd')",
                f"ATTACH '{ks.tmp}/data/hatiproxy.duckdb' AS d",  # type: ignore[attr-defined]
                "COPY shared_name TO '/tmp/leak.csv'",
            ):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    bob.execute(sql)  # type: ignore[arg-type]
        for who in ("alice", "adma", "narrow"):  # orga's keys
            _refused(ks, who, "orgb_work")
        with connect(ks, "root", "orgb_work") as root:  # a superuser reaches every database
            assert root.execute("SELECT v FROM shared_name").fetchall() == [("b-secret",)]
        with connect(ks, "alice") as alice:  # the default database: as before
            assert alice.execute("SELECT count(*) FROM shared_name").fetchone() == (0,)
    finally:
        with connect(ks, "root") as root:
            root.execute("DROP DATABASE orgb_work WITH (FORCE)")


def test_a_superusers_database_is_closed_to_keys(ks: KeyedServer) -> None:
    with connect(ks, "root") as root:
        root.execute("CREATE DATABASE private_db")
        try:
            with connect(ks, "root", "private_db") as inside:
                inside.execute("CREATE TABLE secret (v text)")
                inside.execute("INSERT INTO secret VALUES ('s')")
            for who in ("alice", "adma", "adm"):
                _refused(ks, who, "private_db")
            # a name nobody created still reaches the default database, where the table is not
            with connect(ks, "alice", "anything") as alice:
                assert alice.execute("SELECT current_database()").fetchone() == ("hatidata",)
                with pytest.raises(psycopg.errors.UndefinedTable):
                    alice.execute("SELECT * FROM secret")
        finally:
            root.execute("DROP DATABASE private_db WITH (FORCE)")


def test_an_organisations_database_survives_a_restart(ks: KeyedServer) -> None:
    """Its organisation is recorded with it (hatidata_internal.databases)."""
    with connect(ks, "adma") as adma:
        adma.execute("CREATE DATABASE orga_kept")
    ks.server.stop()
    ks.server = start_server(ks.tmp, *ARGS)  # type: ignore[attr-defined]
    with connect(ks, "alice", "orga_kept") as alice:
        assert alice.execute("SELECT current_database()").fetchone() == ("orga_kept",)
    _refused(ks, "bob", "orga_kept")
    with connect(ks, "adma") as adma:
        adma.execute("DROP DATABASE orga_kept")
