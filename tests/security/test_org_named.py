"""Relations named as text are within the organisation boundary too
(proxy/access/org_boundary.py, transpiler/relations.py): a key of orgb neither draws
from, sets nor reads orga's sequence -- by nextval / setval / currval, in a DEFAULT of
its own table, or in FROM -- nor makes a FOREIGN KEY to orga's table (its rows would tell
which ids orga's table holds, and hold back orga's deletes), nor reads orga's table's columns or its values' min / max
through pragma_table_info / pragma_show / pragma_storage_info; a name computed at run
time is refused while it cannot be judged. orga's own keys and the superuser still do."""

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
        alice.execute("CREATE TABLE orga_ledger (id serial PRIMARY KEY, memo text)")
        alice.execute("INSERT INTO orga_ledger (memo) VALUES ('orga-memo-value')")
        alice.execute("CREATE SEQUENCE orga_counter")
        alice.execute("SELECT nextval('orga_counter')")
    with connect(server, "bob") as bob:
        bob.execute("CREATE TABLE orgb_plain (x int)")
    yield server
    next(gen, None)


def _value(ks: KeyedServer) -> int:
    with connect(ks, "root") as root:
        row = root.execute("SELECT last_value FROM orga_counter").fetchone()
    assert row is not None
    return int(row[0])


SEQUENCE = "permission denied for sequence orga_counter"
TABLE = "permission denied for table orga_ledger"


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT nextval('orga_counter')", SEQUENCE),
        ("SELECT nextval('public.orga_counter')", SEQUENCE),
        ("SELECT nextval('\"orga_counter\"')", SEQUENCE),
        ("SELECT nextval('ORGA_COUNTER'::regclass)", SEQUENCE),
        ("SELECT setval('orga_counter', 1000)", SEQUENCE),
        ("SELECT currval('orga_counter')", SEQUENCE),
        ("SELECT last_value FROM orga_counter", SEQUENCE),
        ("CREATE TABLE orgb_draws (id int DEFAULT nextval('orga_counter'))", SEQUENCE),
        ("SELECT setval(pg_get_serial_sequence('orga_ledger', 'id'), 1000)", TABLE),
        ("SELECT * FROM pragma_table_info('orga_ledger')", TABLE),
        ("SELECT * FROM pragma_show('orga_ledger')", TABLE),
        ("SELECT * FROM pragma_storage_info('orga_ledger')", TABLE),
        ("SELECT * FROM duckdb_table_sample('orga_ledger')", TABLE),
        ("CREATE TABLE orgb_refs (x int REFERENCES orga_ledger (id))", TABLE),
        ("CREATE TABLE orgb_refs (x int, FOREIGN KEY (x) REFERENCES public.orga_ledger)", TABLE),
        ("ALTER TABLE orgb_plain ADD FOREIGN KEY (x) REFERENCES orga_ledger (id)", TABLE),
        ("VACUUM orga_ledger", TABLE),
        ("ANALYZE orga_ledger (nosuch)", TABLE),  # a 42703 would tell its columns
        ("VACUUM (ANALYZE) orgb_plain, public.orga_ledger", TABLE),
        (
            "SELECT nextval('orga' || '_counter')",
            "permission denied for nextval() of a computed name",
        ),
    ],
)
def test_another_organisation_reaches_nothing_named_as_text(
    ks: KeyedServer, sql: str, message: str
) -> None:
    before = _value(ks)
    with connect(ks, "bob") as bob, pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
        bob.execute(sql)  # type: ignore[arg-type]
    assert info.value.diag.message_primary == message
    assert _value(ks) == before  # orga's sequence did not move


def test_nor_over_mcp(ks: KeyedServer) -> None:
    error, text = mcp_query(ks, "bob", "ANALYZE orga_ledger (memo)")
    assert error and "permission denied for table orga_ledger" in text, text
    error, text = mcp_query(ks, "bob", "SELECT * FROM pragma_storage_info('orga_ledger')")
    assert error and "orga-memo" not in text, text
    error, text = mcp_query(ks, "bob", "SELECT nextval('orga_counter')")
    assert error and "permission denied for sequence orga_counter" in text, text


def test_its_own_organisation_and_the_superuser_still_do(ks: KeyedServer) -> None:
    for who in ("alice", "adma", "root"):
        with connect(ks, who) as con:
            before = _value(ks)
            assert con.execute("SELECT nextval('orga_counter')").fetchone() == (before + 1,)
            cols = con.execute("SELECT name FROM pragma_table_info('orga_ledger')").fetchall()
            assert cols == [("id",), ("memo",)]
            con.execute("SELECT setval(pg_get_serial_sequence('orga_ledger', 'id'), 5)")
            con.execute("VACUUM ANALYZE orga_ledger (memo)")
        if who != "root":  # a key (root logs in with a password)
            error, text = mcp_query(ks, who, "VACUUM orga_ledger, orga_counter")
            assert not error, text
    with connect(ks, "bob") as bob:  # its own sequences and serial tables, as before
        bob.execute("CREATE TABLE orgb_items (id serial, name text)")
        bob.execute("INSERT INTO orgb_items (name) VALUES ('x')")
        bob.execute("CREATE SEQUENCE orgb_counter")
        assert bob.execute("SELECT nextval('orgb_counter')").fetchone() == (1,)
        bob.execute("SELECT setval(pg_get_serial_sequence('orgb_items', 'id'), 7)")
        assert bob.execute("SELECT name FROM pragma_table_info('orgb_items')").fetchall()
        bob.execute("ALTER TABLE orgb_items ADD PRIMARY KEY (id)")
        bob.execute("CREATE TABLE orgb_refs (x int REFERENCES orgb_items (id))")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            bob.execute("INSERT INTO orgb_refs VALUES (999)")
