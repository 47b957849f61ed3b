"""Views, macros and materialized views reach no more than the login that reads them,
and only superusers reach server files (read_csv, COPY TO a file, ATTACH, INSTALL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import start_server
from tests.rest.rest_support import KeyedServer
from tests.security.ownership_support import ARGS, connect, keyed_server, psql, refused, restart


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    yield from keyed_server(tmp_path_factory)


# --- views and macros reach no more than the login using them ------------------------------


def test_views_and_macros_reach_no_more_than_their_reader(ks: KeyedServer, tmp_path: Path) -> None:
    csv = tmp_path / "people.csv"
    csv.write_text("name\nann\n")
    with connect(ks, "root") as root:
        root.execute(f"CREATE VIEW people AS SELECT * FROM read_csv('{csv}')")
        root.execute(f"CREATE MACRO people_of() AS TABLE SELECT * FROM read_csv('{csv}')")
        root.execute("CREATE MACRO n_people() AS (SELECT count(*) FROM people)")
        root.execute("CREATE VIEW people2 AS SELECT * FROM people")  # two levels down
        root.execute("CREATE TABLE secret (code TEXT)")
        root.execute("CREATE TABLE ok_base (id INT)")
        root.execute("CREATE VIEW ok AS SELECT s.code FROM secret s")  # named as allowed
        assert root.execute("SELECT name FROM people2").fetchone() == ("ann",)
    for who in ("alice", "adm"):
        with connect(ks, who) as con:
            for sql, through in (
                ("SELECT * FROM people", "view people"),
                ("SELECT * FROM people_of()", "macro people_of"),
                ("SELECT n_people()", "view people"),
                ("SELECT * FROM people2", "view people"),
            ):
                with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
                    con.execute(sql)
                message = info.value.diag.message_primary
                assert "read_csv()" in message and through in message, (sql, message)
    with connect(ks, "narrow") as con:
        refused(con, "SELECT * FROM ok", "permission denied for relation secret (through view ok)")
    with connect(ks, "root") as root:  # a superuser reads it as before
        assert root.execute("SELECT * FROM people_of()").fetchone() == ("ann",)
        with root.transaction():  # a DROP rolled back leaves the view, and its check
            root.execute("DROP VIEW people2")
            raise psycopg.Rollback()
    alice = connect(ks, "alice")
    with alice, pytest.raises(psycopg.errors.InsufficientPrivilege, match="through view"):
        alice.execute("SELECT * FROM people2")
    with connect(ks, "root") as root:
        # Dropping the view ends the refusal: definitions are re-read after DDL.
        root.execute("DROP VIEW people2")
        root.execute("CREATE VIEW people2 AS SELECT 'nobody' AS name")
    with connect(ks, "alice") as alice:
        assert alice.execute("SELECT name FROM people2").fetchone() == ("nobody",)


# --- server files ------------------------------------------------------------------------


def test_an_admin_key_reads_no_server_files(ks: KeyedServer, tmp_path: Path) -> None:
    csv = tmp_path / "f.csv"
    csv.write_text("a\n1\n")
    with connect(ks, "adm") as adm:
        for sql in (
            f"SELECT * FROM read_csv('{csv}')",
            f"SELECT * FROM read_blob('{csv}')",
            f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
            f"ATTACH '{tmp_path / 'x.db'}' AS x",
            "INSTALL httpfs",
            "SET threads = 1",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only superusers"):
                adm.execute(sql)
    assert not (tmp_path / "out.csv").exists()
    with connect(ks, "root") as root:
        assert root.execute(f"SELECT a FROM read_csv('{csv}')").fetchone() == (1,)


def test_a_catalog_forged_before_the_fix_is_named_at_start_and_can_be_dropped(
    tmp_path: Path,
) -> None:
    """A database file where an earlier version let a forged public.pg_namespace in: the
    start-up log names it with the repair, and a superuser's DROP removes it."""
    import duckdb

    (tmp_path / "data").mkdir()
    con = duckdb.connect(str(tmp_path / "data" / "hatiproxy.duckdb"))
    con.execute("CREATE VIEW pg_namespace AS SELECT 1 AS oid")
    con.execute("CREATE TABLE kept (a INT)")
    con.close()
    server = start_server(tmp_path, *ARGS)
    ks = KeyedServer(server, {})
    try:
        assert "DROP VIEW public.pg_namespace" in server.log()
        assert "kept" not in psql(ks, "root", r"\dt", check=False)  # what the forgery did
        with connect(ks, "root") as root:
            root.execute("DROP VIEW public.pg_namespace")
            # the catalog's own pg_namespace cannot be dropped in its place
            refused(
                root,
                "DROP VIEW pg_namespace",
                'permission denied: "pg_namespace" is a system catalog',
            )
        assert "kept" in psql(ks, "root", r"\dt")
    finally:
        server.stop()


def test_a_materialized_view_reaches_no_more_than_its_creator(ks: KeyedServer) -> None:
    """A key limited to some tables cannot copy another table's rows into a materialized
    view (its query is checked as a view's is); its owner's REFRESH re-runs the query."""
    with connect(ks, "root") as root:
        root.execute("CREATE TABLE IF NOT EXISTS secret (code TEXT)")
        root.execute("INSERT INTO secret VALUES ('s3cr3t')")
    with connect(ks, "narrow") as con:
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
            con.execute("CREATE MATERIALIZED VIEW ok AS SELECT code FROM secret")
        assert "secret" in info.value.diag.message_primary
    with connect(ks, "alice") as alice:  # persists with its owner across a restart
        alice.execute("CREATE MATERIALIZED VIEW alice_mv AS SELECT 1 AS a WITH NO DATA")
    restart(ks)
    with connect(ks, "alice") as alice:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
            alice.execute("SELECT * FROM alice_mv")
        alice.execute("REFRESH MATERIALIZED VIEW alice_mv")
        assert alice.execute("SELECT a FROM alice_mv").fetchall() == [(1,)]
        owner = "SELECT matviewowner FROM pg_matviews WHERE matviewname = 'alice_mv'"
        assert alice.execute(owner).fetchone() == ("alice@orga",)
    with connect(ks, "bob") as bob:
        refused(
            bob, "REFRESH MATERIALIZED VIEW alice_mv", "must be owner of materialized view alice_mv"
        )
    with connect(ks, "alice") as alice:
        alice.execute("DROP MATERIALIZED VIEW alice_mv")
