"""CREATE DATABASE / DROP DATABASE against a real server: each database is a DuckDB file
of its own (proxy/db/databases.py), reached by the name a client connects with; the
errors are PostgreSQL 15's (42P04, 3D000, 55006 with its DETAIL, 25001)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path_factory.mktemp("databases"), "--embedding-provider", "hash")
    try:
        yield srv
    finally:
        srv.stop()


def on(server: ServerProcess, dbname: str = "hatidata") -> psycopg.Connection:
    return psycopg.connect(server.dsn, dbname=dbname, autocommit=True)


def names(con: psycopg.Connection) -> list[str]:
    return [r[0] for r in con.execute("SELECT datname FROM pg_database ORDER BY oid")]


def test_a_new_database_starts_empty_and_keeps_its_own_objects(server: ServerProcess) -> None:
    with on(server) as main:
        main.execute("CREATE TABLE shared_name (a int)")
        main.execute("INSERT INTO shared_name VALUES (1)")
        main.execute("CREATE DOMAIN positive AS int CHECK (VALUE > 0)")
        main.execute("CREATE SEQUENCE counter START 100")
        main.execute('CREATE DATABASE "Sales"')
        assert names(main) == ["hatidata", "Sales"]
        with on(server, "Sales") as sales:
            assert sales.execute("SELECT current_database()").fetchone() == ("Sales",)
            with pytest.raises(psycopg.errors.UndefinedTable):
                sales.execute("SELECT * FROM shared_name")
            # the same names, other shapes: each database has its own
            sales.execute("CREATE TABLE shared_name (b text)")
            sales.execute("INSERT INTO shared_name VALUES ('x')")
            sales.execute("CREATE DOMAIN positive AS int CHECK (VALUE < 0)")
            sales.execute("CREATE SEQUENCE counter START 5")
            assert sales.execute("SELECT * FROM shared_name").fetchall() == [("x",)]
            assert sales.execute("SELECT (-3)::positive, nextval('counter')").fetchone() == (-3, 5)
            with pytest.raises(psycopg.errors.CheckViolation):
                sales.execute("SELECT 3::positive")
            # no name reaches the other database's file
            tables = sales.execute("SELECT table_name FROM information_schema.tables "
                                   "WHERE table_schema = 'public'").fetchall()  # fmt: skip
            assert tables == [("shared_name",)]
            activity = sales.execute(
                "SELECT datname FROM pg_stat_activity WHERE pid = pg_backend_pid()"
            ).fetchone()
            assert activity == ("Sales",)
        assert main.execute("SELECT * FROM shared_name").fetchall() == [(1,)]
        assert main.execute("SELECT 3::positive, nextval('counter')").fetchone() == (3, 100)
        with pytest.raises(psycopg.errors.CheckViolation):
            main.execute("SELECT (-3)::positive")
        main.execute('DROP DATABASE "Sales"')
        assert names(main) == ["hatidata"]


def test_postgresql_errors(server: ServerProcess) -> None:
    with on(server) as main:
        main.execute("CREATE DATABASE errs")
        with pytest.raises(
            psycopg.errors.DuplicateDatabase, match='database "errs" already exists'
        ):
            main.execute("CREATE DATABASE errs")
        with pytest.raises(psycopg.errors.DuplicateDatabase):
            main.execute("CREATE DATABASE hatidata")
        with pytest.raises(
            psycopg.errors.InvalidCatalogName, match='database "nope" does not exist'
        ):
            main.execute("DROP DATABASE nope")
        notices: list[str] = []
        main.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        main.execute("DROP DATABASE IF EXISTS nope")
        assert notices == ['database "nope" does not exist, skipping']
        with pytest.raises(psycopg.errors.InvalidCatalogName, match='template database "nope"'):
            main.execute("CREATE DATABASE x TEMPLATE nope")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="LATIN1"):
            main.execute("CREATE DATABASE x ENCODING 'LATIN1'")
        with pytest.raises(psycopg.errors.SyntaxError, match='option "colour" not recognized'):
            main.execute("CREATE DATABASE x COLOUR 'red'")
        with (
            main.transaction(),
            pytest.raises(
                psycopg.errors.ActiveSqlTransaction, match="cannot run inside a transaction block"
            ),
        ):
            main.execute("DROP DATABASE errs")
        with pytest.raises(psycopg.errors.ObjectInUse, match="currently open database"):
            main.execute("DROP DATABASE hatidata")
        with on(server, "errs") as inside:
            with pytest.raises(psycopg.errors.ObjectInUse, match="currently open database"):
                inside.execute("DROP DATABASE errs")
            with pytest.raises(psycopg.errors.ObjectInUse) as busy:
                main.execute("DROP DATABASE errs")
            assert (
                busy.value.diag.message_primary
                == 'database "errs" is being accessed by other users'
            )
            assert busy.value.diag.message_detail == "There is 1 other session using the database."
        main.execute("DROP DATABASE errs")  # its only session has gone
        assert names(main) == ["hatidata"]


def test_drop_with_force_ends_the_sessions_on_it(server: ServerProcess) -> None:
    with on(server) as main:
        main.execute("CREATE DATABASE forced")
        a, b = on(server, "forced"), on(server, "forced")
        with a, b:
            main.execute("DROP DATABASE forced WITH (FORCE)")
            for con in (a, b):
                with pytest.raises(psycopg.OperationalError, match="terminating connection"):
                    con.execute("SELECT 1")
        assert names(main) == ["hatidata"]
        main.execute("CREATE DATABASE forced")  # the name is free again, and the file new
        with on(server, "forced") as again:
            assert again.execute("SELECT count(*) FROM information_schema.tables "
                                 "WHERE table_schema = 'public'").fetchone() == (0,)  # fmt: skip
        main.execute("DROP DATABASE forced")


def test_template_copies_a_database_nobody_is_on(server: ServerProcess) -> None:
    with on(server) as main:
        main.execute("CREATE DATABASE source_db")
        with on(server, "source_db") as src:
            src.execute("CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL)")
            src.execute("INSERT INTO items (name) VALUES ('a'), ('b')")
            with pytest.raises(psycopg.errors.ObjectInUse, match='source database "source_db"'):
                main.execute("CREATE DATABASE copy_db TEMPLATE source_db")
        main.execute("CREATE DATABASE copy_db WITH TEMPLATE = source_db")
        with on(server, "copy_db") as copy:
            assert copy.execute("SELECT name FROM items ORDER BY id").fetchall() == [("a",), ("b",)]
            copy.execute("INSERT INTO items (name) VALUES ('c')")  # its own sequence, own rows
            assert copy.execute("SELECT max(id) FROM items").fetchone() == (3,)
        with on(server, "source_db") as src:
            assert src.execute("SELECT count(*) FROM items").fetchone() == (2,)
        main.execute("CREATE DATABASE empty_db TEMPLATE template0")
        main.execute("DROP DATABASE copy_db")
        main.execute("DROP DATABASE source_db")
        main.execute("DROP DATABASE empty_db")


def test_databases_and_their_data_survive_a_restart(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--embedding-provider", "hash")
    try:
        with on(srv) as main:
            main.execute("CREATE DATABASE kept")
        with on(srv, "kept") as kept:
            kept.execute("CREATE TABLE t AS SELECT 42 AS v")
        srv.stop()
        srv = start_server(tmp_path, "--embedding-provider", "hash")
        with on(srv) as main:
            assert names(main) == ["hatidata", "kept"]
        with on(srv, "kept") as kept:
            assert kept.execute("SELECT v FROM t").fetchall() == [(42,)]
    finally:
        srv.stop()


def test_semantic_sql_and_agent_functions_in_a_created_database(server: ServerProcess) -> None:
    with on(server) as main:
        main.execute("CREATE DATABASE semantic_db")
        try:
            with on(server, "semantic_db") as sem:
                sem.execute("CREATE TABLE tickets (id int, body text)")
                sem.execute("INSERT INTO tickets VALUES (1, 'billing dispute about an invoice'), "
                            "(2, 'the weather is nice')")  # fmt: skip
                found = sem.execute("SELECT id FROM tickets WHERE "
                                    "semantic_match(body, 'billing dispute about an invoice')")  # fmt: skip
                assert found.fetchall() == [(1,)]
                assert sem.execute("SELECT count(*) FROM pg_proc WHERE proname = "
                                   "'store_memory'").fetchone() == (1,)  # fmt: skip
                # the agent layer is the server's: a memory stored here is the agent's anywhere
                sem.execute("SELECT * FROM store_memory('kept for the agent in semantic_db')")
            mine = main.execute("SELECT count(*) FROM _hatidata_agent_memory WHERE content = "
                                "'kept for the agent in semantic_db'").fetchone()  # fmt: skip
            assert mine == (1,)
        finally:
            main.execute("DROP DATABASE semantic_db")


def test_alter_database_rename(server: ServerProcess) -> None:
    with on(server) as main:
        main.execute("CREATE DATABASE before_name")
        main.execute("CREATE DATABASE taken")
        with on(server, "before_name") as inside:
            inside.execute("CREATE TABLE kept AS SELECT 7 AS v")
            with pytest.raises(psycopg.errors.FeatureNotSupported, match="current database"):
                inside.execute("ALTER DATABASE before_name RENAME TO x")
        with pytest.raises(psycopg.errors.DuplicateDatabase):
            main.execute("ALTER DATABASE before_name RENAME TO taken")
        with pytest.raises(psycopg.errors.InvalidCatalogName):
            main.execute("ALTER DATABASE nope RENAME TO x")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="per-database settings"):
            main.execute("ALTER DATABASE taken SET search_path TO x")
        main.execute("ALTER DATABASE taken OWNER TO tester")  # pg_dump's: acknowledged
        main.execute("ALTER DATABASE before_name RENAME TO after_name")
        assert names(main) == ["hatidata", "after_name", "taken"]
        with on(server, "after_name") as renamed:
            assert renamed.execute("SELECT current_database(), v FROM kept").fetchone() == (
                "after_name", 7
            )  # fmt: skip
        main.execute("DROP DATABASE after_name")
        main.execute("DROP DATABASE taken")


def test_notifications_stay_in_their_database(server: ServerProcess) -> None:
    # PostgreSQL's LISTEN / NOTIFY are per database: the same channel name elsewhere is
    # another channel
    with on(server) as main:
        main.execute("CREATE DATABASE notify_db")
        try:
            with on(server, "notify_db") as there, on(server) as here:
                there.execute("LISTEN jobs")
                here.execute("LISTEN jobs")
                main.execute("NOTIFY jobs, 'from the default database'")
                got_here = [n.payload for n in here.notifies(timeout=1)]
                assert got_here == ["from the default database"]
                assert [n.payload for n in there.notifies(timeout=0.5)] == []
                with on(server, "notify_db") as notifier:
                    notifier.execute("SELECT pg_notify('jobs', 'from notify_db')")
                assert [n.payload for n in there.notifies(timeout=1)] == ["from notify_db"]
                assert [n.payload for n in here.notifies(timeout=0.5)] == []
        finally:
            main.execute("DROP DATABASE notify_db WITH (FORCE)")
