"""The catalogs list a key only what its organisation may see
(proxy/db/catalog/org_scope.py, proxy/access/catalog_reach.py): orgb's key (bob, objects
named boltco_*) finds none of orga's (alice, acmeco_*) table / column / view text / sequence value / function body / comment / index /
schema / type names in any catalog -- pg_catalog, information_schema, DuckDB's own
duckdb_*() functions and information_schema, sqlite_master -- however it reaches them,
over the wire and over MCP; each organisation's keys see their own, the superuser sees
both. What would read the catalog unfiltered is refused with 42501."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest
import sqlalchemy as sa

from tests.rest.rest_support import KeyedServer
from tests.security.ownership_support import (
    connect,
    keyed_server,
    mcp_call,
    mcp_query,
    psql,
    refused,
)


def _objects(con: psycopg.Connection, org: str) -> None:
    """One of each kind of object, every name and text holding `org`."""
    up = org.upper()
    con.execute(
        f"CREATE TABLE {org}_acct (id serial PRIMARY KEY, {org}_col text DEFAULT '{org}-default',"
        " n int UNIQUE)"
    )
    con.execute(f"INSERT INTO {org}_acct ({org}_col) VALUES ('a'), ('b')")
    con.execute(f"CREATE INDEX {org}_idx ON {org}_acct (n)")
    con.execute(f"CREATE VIEW {org}_view AS SELECT '{up}-CUSTOMER' AS who FROM {org}_acct")
    con.execute(f"CREATE SEQUENCE {org}_seq START 777")
    con.execute(f"SELECT nextval('{org}_seq')")
    con.execute(f"CREATE FUNCTION {org}_fn() RETURNS text LANGUAGE sql AS $$ SELECT '{up}-BODY' $$")
    con.execute(f"COMMENT ON TABLE {org}_acct IS '{up}-COMMENT'")
    con.execute(f"CREATE SCHEMA {org}_schema")
    con.execute(f"CREATE TYPE {org}_mood AS ENUM ('sad')")
    con.execute(f"CREATE TABLE {org}_child (id int REFERENCES {org}_acct (id))")


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    server = next(gen := keyed_server(tmp_path_factory))
    with connect(server, "alice") as alice:
        _objects(alice, "acmeco")
    with connect(server, "bob") as bob:
        _objects(bob, "boltco")
    yield server
    next(gen, None)


# Each lists one kind of object with the name or text that tells it apart.
CATALOGS = [
    "SELECT relname FROM pg_class",
    "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid",
    "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef",
    "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint",
    "SELECT indexrelid::regclass::text FROM pg_index",
    "SELECT indexname, indexdef FROM pg_indexes",
    "SELECT viewname, definition FROM pg_views",
    "SELECT proname, prosrc FROM pg_proc",
    "SELECT sequencename, last_value FROM pg_sequences",
    "SELECT relname, n_live_tup FROM pg_stat_user_tables",
    "SELECT relname, n_live_tup FROM pg_stat_all_tables",
    "SELECT description FROM pg_description",
    "SELECT nspname FROM pg_namespace",
    "SELECT typname FROM pg_type",
    "SELECT tablename FROM pg_tables",
    "SELECT table_name FROM information_schema.tables",
    "SELECT table_name, column_name, column_default FROM information_schema.columns",
    "SELECT table_name, view_definition FROM information_schema.views",
    "SELECT sequence_name FROM information_schema.sequences",
    "SELECT routine_name, routine_definition FROM information_schema.routines",
    "SELECT constraint_name FROM information_schema.table_constraints",
    "SELECT constraint_name FROM information_schema.key_column_usage",
    "SELECT schema_name FROM information_schema.schemata",
    "SELECT table_name, sql, estimated_size FROM duckdb_tables()",
    "SELECT table_name, column_name, column_default FROM duckdb_columns()",
    "SELECT view_name, sql FROM duckdb_views()",
    "SELECT sequence_name, last_value FROM duckdb_sequences()",
    "SELECT function_name, macro_definition FROM duckdb_functions()",
    "SELECT table_name, constraint_text FROM duckdb_constraints()",
    "SELECT index_name, sql FROM duckdb_indexes()",
    "SELECT schema_name FROM duckdb_schemas()",
    "SELECT type_name FROM duckdb_types()",
    "SELECT name, sql FROM sqlite_master",
    "SELECT table_name FROM system.information_schema.tables",
    "SELECT table_name, column_name FROM system.information_schema.columns",
]


def _text(con: psycopg.Connection, sql: str) -> str:
    return repr(con.execute(sql).fetchall()).lower()  # type: ignore[arg-type]


@pytest.mark.parametrize("sql", CATALOGS)
def test_each_catalog_lists_an_organisation_its_own(ks: KeyedServer, sql: str) -> None:
    with connect(ks, "bob") as bob:
        text = _text(bob, sql)
        assert "acmeco" not in text, text
        assert "boltco" in text, text
    with connect(ks, "alice") as alice:
        text = _text(alice, sql)
        assert "boltco" not in text and "acmeco" in text, text
    with connect(ks, "root") as root:
        text = _text(root, sql)
        assert "acmeco" in text and "boltco" in text, text


HIDDEN = [
    "SELECT pg_get_viewdef('acmeco_view'::regclass)",
    "SELECT obj_description('acmeco_acct'::regclass)",
]


@pytest.mark.parametrize("sql", HIDDEN)
def test_another_organisations_objects_are_not_found_by_name(ks: KeyedServer, sql: str) -> None:
    with connect(ks, "bob") as bob, pytest.raises(psycopg.errors.UndefinedTable):
        bob.execute(sql)  # type: ignore[arg-type]
    with connect(ks, "root") as root:
        assert "acmeco" in _text(root, sql)
    with connect(ks, "bob") as bob:
        assert bob.execute("SELECT to_regclass('acmeco_acct')").fetchone() == (None,)


def test_however_the_catalog_is_reached(ks: KeyedServer) -> None:
    """Views, macros, CTEs, subqueries, quoted and qualified names, prepared statements,
    COPY TO STDOUT: the filter is in DuckDB's catalog functions themselves."""
    with connect(ks, "bob") as bob:
        bob.execute("CREATE VIEW boltco_peek AS SELECT relname FROM pg_catalog.pg_class")
        bob.execute("CREATE VIEW boltco_peek2 AS SELECT * FROM boltco_peek")
        bob.execute("CREATE MACRO boltco_list() AS TABLE SELECT table_name FROM duckdb_tables()")
        for sql in (
            "SELECT * FROM boltco_peek2",
            "SELECT * FROM boltco_list()",
            "WITH c AS (SELECT relname FROM pg_catalog.pg_class) SELECT * FROM c",
            'SELECT "C".relname FROM "pg_catalog"."pg_class" "C"',
            'SELECT relname FROM "PG_CATALOG"."PG_CLASS"',
            "SELECT (SELECT string_agg(table_name, ',') FROM information_schema.tables)",
        ):
            text = _text(bob, sql)
            assert "acmeco" not in text and "boltco" in text, (sql, text)
        rows = bob.execute(
            "SELECT relname FROM pg_class WHERE relname LIKE %s", ["%co_acct"], prepare=True
        ).fetchall()
        assert rows == [("boltco_acct",)], rows
        with bob.cursor().copy("COPY (SELECT relname FROM pg_class) TO STDOUT") as copy:
            text = b"".join(bytes(chunk) for chunk in copy).decode()
        assert "acmeco" not in text and "boltco" in text, text
    with connect(ks, "root") as root:  # the superuser reading bob's view sees everything
        assert "acmeco" in _text(root, "SELECT * FROM boltco_peek2")


def test_a_table_made_later_is_not_listed_from_a_snapshot(ks: KeyedServer) -> None:
    """pg_class is a per-connection snapshot (snapshot.py): one made before acmeco's new
    table (listed for the superuser) does not list it to boltco afterwards either."""
    with connect(ks, "bob") as bob, connect(ks, "root") as root:
        assert "acmeco_late" not in _text(bob, "SELECT relname FROM pg_class")
        assert "acmeco_late" not in _text(root, "SELECT relname FROM pg_class")
        with connect(ks, "alice") as alice:
            alice.execute("CREATE TABLE acmeco_late (x int)")
        assert "acmeco_late" in _text(root, "SELECT relname FROM pg_class")
        assert "acmeco_late" not in _text(bob, "SELECT relname FROM pg_class")
        with connect(ks, "alice") as alice:
            alice.execute("DROP TABLE acmeco_late")


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT * FROM system.main.duckdb_tables()", "permission denied for function duckdb_tables"),
        ('SELECT * FROM "system".duckdb_views()', "permission denied for function duckdb_views"),
        ('SELECT * FROM "SYSTEM"."MAIN"."DUCKDB_COLUMNS"()', "permission denied for function duckdb_columns"),
        ("SELECT * FROM pg_catalog.__hati_owners", "permission denied for table __hati_owners"),
        ('SELECT * FROM (SELECT * FROM "__hati_routines") r', "permission denied for table __hati_routines"),
        ("SELECT * FROM __hati_constraints", "permission denied for table __hati_constraints"),
        ("CREATE VIEW boltco_raw AS SELECT * FROM system.main.duckdb_functions()", "permission denied for function duckdb_functions"),
        ("DROP MACRO TABLE duckdb_tables", "must be owner of function duckdb_tables"),
        ("DROP MACRO TABLE temp.main.duckdb_columns", "must be owner of function duckdb_columns"),
        ("CREATE OR REPLACE TEMP MACRO duckdb_tables() AS TABLE SELECT 1", "permission denied for schema pg_catalog"),
        ("CREATE MACRO duckdb_views() AS TABLE SELECT 1", "permission denied for schema pg_catalog"),
        ("SELECT * FROM query('SELECT * FROM system.main.duckdb_tables()')", "permission denied: query() reads or writes server files; only superusers may"),
        ("DESCRIBE acmeco_acct", "permission denied for table acmeco_acct"),
        ("SUMMARIZE acmeco_acct", "permission denied for table acmeco_acct"),
    ],
)  # fmt: skip
def test_what_would_read_the_catalog_unfiltered_is_refused(
    ks: KeyedServer, sql: str, message: str
) -> None:
    with connect(ks, "bob") as bob:
        refused(bob, sql, message)
        assert "acmeco" not in _text(bob, "SELECT table_name FROM duckdb_tables()")


def test_over_mcp(ks: KeyedServer) -> None:
    for sql in CATALOGS[:10] + ["SELECT table_name FROM duckdb_tables()"]:
        error, text = mcp_query(ks, "bob", sql)
        assert not error and "acmeco" not in text.lower() and "boltco" in text.lower(), (sql, text)
        error, text = mcp_query(ks, "alice", sql)
        assert not error and "boltco" not in text.lower() and "acmeco" in text.lower(), (sql, text)
    for tool, args in (("list_tables", {}), ("describe_table", {"table": "acmeco_acct"})):
        r = mcp_call(ks.server.mcp_url, tool, args, ks.secrets["bob"])
        text = r.text.lower()
        assert "acmeco_col" not in text and "acmeco_view" not in text, (tool, text)
    r = mcp_call(ks.server.mcp_url, "list_tables", {}, ks.secrets["bob"])
    assert "boltco_acct" in r.text and "acmeco" not in r.text, r.text
    error, text = mcp_query(ks, "bob", "SELECT * FROM system.main.duckdb_tables()")
    assert error and "permission denied for function duckdb_tables" in text, text
    error, text = mcp_query(ks, "bob", "DROP MACRO TABLE duckdb_tables")
    assert error and "must be owner of function duckdb_tables" in text, text


def test_psql_lists_an_organisation_its_own(ks: KeyedServer) -> None:
    out = psql(ks, "bob", r"\dt")
    assert "boltco_acct" in out and "acmeco" not in out, out
    out = psql(ks, "bob", r"\d boltco_acct")
    assert "boltco_col" in out and "boltco-default" in out and "boltco_idx" in out, out
    out = psql(ks, "bob", r"\d acmeco_acct", check=False)
    assert "acmeco_col" not in out, out
    out = psql(ks, "alice", r"\d+ acmeco_acct")
    assert "acmeco_col" in out and "boltco" not in out, out
    assert "boltco_acct" in psql(ks, "root", r"\dt") and "acmeco_acct" in psql(ks, "root", r"\dt")


def test_sqlalchemy_reflection_sees_its_organisations_tables(ks: KeyedServer) -> None:
    def names(who: str) -> tuple[list[str], float]:
        password = "rootpw" if who == "root" else ks.secrets[who]
        user = "root" if who == "root" else "someone"
        url = sa.URL.create(
            "postgresql+psycopg", user, password, "127.0.0.1", ks.server.port, "hatidata"
        )
        engine = sa.create_engine(url)
        try:
            started = time.perf_counter()
            meta = sa.MetaData()
            meta.reflect(engine)
            return sorted(meta.tables), time.perf_counter() - started
        finally:
            engine.dispose()

    bob, _ = names("bob")
    assert "boltco_acct" in bob and not [n for n in bob if n.startswith("acmeco")], bob
    alice, _ = names("alice")
    assert "acmeco_acct" in alice and not [n for n in alice if n.startswith("boltco")], alice
    root, _ = names("root")
    assert {"acmeco_acct", "boltco_acct"} <= set(root), root


def test_inside_a_branch_query(ks: KeyedServer) -> None:
    """branch_query runs the key's SQL on a pooled connection: scoped there too, and the
    connection goes back to the pool unscoped (the superuser's branch still sees all)."""
    sql = "SELECT row FROM branch_query('b-cat', 'SELECT table_name FROM duckdb_tables()')"
    with connect(ks, "bob") as bob:
        bob.execute("SELECT * FROM branch_create('b-cat', tables := '[\"boltco_acct\"]')")
        text = repr(bob.execute(sql).fetchall()).lower()
        assert "acmeco" not in text and "boltco" in text, text
    with connect(ks, "root") as root:
        root.execute("SELECT * FROM branch_create('b-cat', tables := '[\"acmeco_acct\"]')")
        text = repr(root.execute(sql).fetchall()).lower()
        assert "acmeco" in text and "boltco" in text, text
