"""An organisation is the boundary of every key, for the users' tables too
(proxy/access/org_boundary.py): a key of orgb reaches no relation a key of orga owns --
not by name, qualified or not, not through COPY, a view, a macro or MCP -- while orga's
other keys and the server's superuser do, and tables the superuser owns stay open to
every key. Changing another organisation's table stays `must be owner of table t`."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.rest.rest_support import KeyedServer
from tests.security.ownership_support import connect, keyed_server, mcp_query


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    server = next(gen := keyed_server(tmp_path_factory))
    with connect(server, "alice") as alice:
        alice.execute("CREATE TABLE orga_notes (id int, body text)")
        alice.execute("INSERT INTO orga_notes VALUES (1, 'orga-secret')")
        alice.execute("CREATE VIEW orga_view AS SELECT body FROM orga_notes")
        alice.execute("CREATE MACRO orga_body() AS (SELECT max(body) FROM orga_notes)")
    with connect(server, "root") as root:
        root.execute("CREATE TABLE shared_ref (code text)")
        root.execute("INSERT INTO shared_ref VALUES ('for everyone')")
    yield server
    next(gen, None)


REACHING = [
    "SELECT * FROM orga_notes",
    "SELECT * FROM public.orga_notes",
    "SELECT * FROM ORGA_NOTES",
    "TABLE orga_notes",
    "SELECT count(*) FROM shared_ref JOIN orga_notes ON true",
    "SELECT * FROM shared_ref WHERE code IN (SELECT body FROM orga_notes)",
    "WITH x AS (SELECT * FROM orga_notes) SELECT * FROM x",
    "INSERT INTO orga_notes VALUES (2, 'from orgb')",
    "INSERT INTO shared_ref SELECT body FROM orga_notes",
    "UPDATE orga_notes SET body = 'x'",
    "DELETE FROM orga_notes",
    "CREATE TABLE orgb_copy AS SELECT * FROM orga_notes",
    "CREATE VIEW orgb_view AS SELECT * FROM orga_notes",
]


@pytest.mark.parametrize("sql", REACHING)
@pytest.mark.parametrize("who", ["bob", "adm"])  # orgb's agent key and its admin key
def test_another_organisation_reaches_no_table_of_orga(ks: KeyedServer, who: str, sql: str) -> None:
    with connect(ks, who) as con, pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
        con.execute(sql)  # type: ignore[arg-type]
    assert info.value.diag.message_primary == "permission denied for table orga_notes"
    with connect(ks, "root") as root:  # nothing changed
        assert root.execute("SELECT body FROM orga_notes").fetchall() == [("orga-secret",)]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT * FROM orga_view", "permission denied for view orga_view"),
        ("SELECT orga_body()", "permission denied for table orga_notes (through macro orga_body)"),
    ],
)
def test_nor_through_orgas_views_and_macros(ks: KeyedServer, sql: str, message: str) -> None:
    with connect(ks, "bob") as bob, pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
        bob.execute(sql)  # type: ignore[arg-type]
    assert info.value.diag.message_primary == message


def test_nor_by_copy(ks: KeyedServer) -> None:
    bob = connect(ks, "bob")
    with (
        bob,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
        bob.cursor() as cur,
        cur.copy("COPY orga_notes TO STDOUT") as copy,
    ):
        b"".join(copy)


def test_nor_over_mcp(ks: KeyedServer) -> None:
    for who, ok in (("bob", False), ("alice", True)):
        error, text = mcp_query(ks, who, "SELECT body FROM orga_notes")
        assert error is not ok, text
        assert ("orga-secret" in text) is ok, text


def test_its_own_organisation_and_the_superuser_reach_it(ks: KeyedServer) -> None:
    for who in ("alice", "adma", "root"):
        with connect(ks, who) as con:
            assert con.execute("SELECT body FROM orga_notes").fetchall() == [("orga-secret",)]
            assert con.execute("SELECT orga_body()").fetchone() == ("orga-secret",)
    for who in ("bob", "adm", "alice"):  # the superuser's tables: every key, as before
        with connect(ks, who) as con:
            assert con.execute("SELECT code FROM shared_ref").fetchone() == ("for everyone",)


def test_changing_it_is_still_for_its_owner(ks: KeyedServer) -> None:
    with connect(ks, "bob") as bob, pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
        bob.execute("ALTER TABLE orga_notes ADD COLUMN x int")
    assert info.value.diag.message_primary == "must be owner of table orga_notes"


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE MATERIALIZED VIEW orgb_mv AS SELECT * FROM orga_notes",
        "SELECT * INTO orgb_into FROM orga_notes",
        "CREATE TABLE orgb_t2 AS (SELECT body FROM orga_notes)",
        "CREATE FUNCTION orgb_f() RETURNS text LANGUAGE sql AS $$ SELECT body FROM orga_notes $$",
    ],
)
def test_ddl_reads_no_table_of_orga_either(ks: KeyedServer, sql: str) -> None:
    """DDL that reads rows (or stores a query that will) by orgb's key reaches nothing of
    orga's: refused when it runs, or when the stored query is used."""
    with connect(ks, "bob") as bob:
        try:
            bob.execute(sql)  # type: ignore[arg-type]
        except psycopg.errors.InsufficientPrivilege as exc:
            assert "orga_notes" in (exc.diag.message_primary or "")
            return
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="orga_notes"):
            bob.execute("SELECT orgb_f()")


def test_a_branch_holds_nothing_of_orga(ks: KeyedServer) -> None:
    """An agent branch (a schema of views over main's tables, copied on write) of orgb's
    key neither copies nor shows orga's table, and a branch schema is judged as main."""
    with connect(ks, "bob") as bob:
        with pytest.raises(psycopg.Error, match="orga_notes"):
            bob.execute("SELECT * FROM branch_create('b-copy', tables := '[\"orga_notes\"]')")
        schema = bob.execute(
            "SELECT schema_name FROM branch_create('b-plain', tables := '[\"shared_ref\"]')"
        ).fetchone()[0]
    with connect(ks, "root") as root:  # no view of orga's table in bob's branch
        views = root.execute(
            "SELECT count(*) FROM duckdb_views() WHERE schema_name = %s AND view_name = "
            "'orga_notes'",
            [schema],
        ).fetchone()
        assert views == (0,)
        root.execute(f"CREATE TABLE {schema}.orga_notes AS SELECT * FROM orga_notes")
    with connect(ks, "bob") as bob, pytest.raises(psycopg.errors.InsufficientPrivilege):
        bob.execute(f"SELECT * FROM {schema}.orga_notes")  # type: ignore[arg-type]
