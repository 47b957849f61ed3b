"""Ownership and system objects over the wire, as PostgreSQL users expect.

Two agent keys of two organisations (alice@orga, bob@orgb), an admin key of orgb and a
configured superuser (root): what a login creates is its own; another login's ALTER,
RENAME, DROP, COMMENT ON and CREATE OR REPLACE are 42501 `must be owner of <kind> <name>`;
pg_catalog / information_schema cannot be changed by anyone (a forged pg_namespace once
emptied psql's \\dt for every client and survived a restart). What views, macros and
server files reach: test_ownership_reach.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
import requests

from tests.rest.rest_support import KeyedServer
from tests.security.ownership_support import (
    connect,
    keyed_server,
    mcp_query,
    psql,
    refused,
    restart,
)


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    yield from keyed_server(tmp_path_factory)


# --- system schemas ----------------------------------------------------------------------

FORGERIES = (
    "CREATE OR REPLACE VIEW pg_catalog.pg_namespace AS SELECT 1 AS oid",
    "CREATE VIEW pg_namespace AS SELECT 1 AS oid",
    "CREATE OR REPLACE MACRO pg_catalog.format_type(a, b) AS 'forged'",
    "CREATE TABLE information_schema.forged (a INT)",
    "ALTER TABLE information_schema.tables RENAME TO gone",
    "DROP VIEW pg_catalog.pg_class",
    "INSERT INTO pg_catalog.pg_type (oid, typname) VALUES (1, 'forged')",
    "DROP VIEW _hatidata_agent_memory",
    "CREATE OR REPLACE VIEW _hatidata_agent_memory AS SELECT 'FORGED' AS content",
    "UPDATE _hatidata_embedding_cache SET model = 'forged'",
    "CREATE TABLE hatidata_internal.forged (a INT)",
)


def test_nobody_forges_the_catalog_and_psql_survives_a_restart(ks: KeyedServer) -> None:
    with connect(ks, "root") as root:
        root.execute("CREATE TABLE visible (a INT)")
    for who in ("alice", "adm"):
        with connect(ks, who) as con:
            refused(con, FORGERIES[0], "permission denied for schema pg_catalog")
            refused(con, FORGERIES[3], "permission denied for schema information_schema")
            refused(con, FORGERIES[5], "must be owner of table pg_class")
            refused(con, FORGERIES[6], "permission denied for table pg_type")
            refused(con, FORGERIES[7], "must be owner of view _hatidata_agent_memory")
            for sql in FORGERIES:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    con.execute(sql)
    with connect(ks, "root") as root:  # PostgreSQL refuses superusers too (no
        # allow_system_table_mods): a forged catalog would hide it from every client
        refused(root, FORGERIES[0], 'permission denied: "pg_namespace" is a system catalog')
        refused(root, FORGERIES[1], 'permission denied to create "pg_catalog.pg_namespace"')
        for sql in FORGERIES[:7]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                root.execute(sql)
    restart(ks)
    for who in ("root", "bob"):
        assert "visible" in psql(ks, who, r"\dt")
    with connect(ks, "root") as root:
        views = root.execute(
            "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' "
            "AND view_name IN ('pg_namespace', 'format_type')"
        ).fetchall()
        assert views == []


# --- owners ------------------------------------------------------------------------------

# kind, create, then (statement, message) pairs another login is refused
OBJECTS = {
    "table": (
        "CREATE TABLE o_t (a INT)",
        [
            ("ALTER TABLE o_t ADD COLUMN b INT", "must be owner of table o_t"),
            ("ALTER TABLE o_t RENAME TO o_t2", "must be owner of table o_t"),
            ("COMMENT ON TABLE o_t IS 'mine'", "must be owner of table o_t"),
            ("CREATE OR REPLACE TABLE o_t (x INT)", "must be owner of table o_t"),
            ("CREATE INDEX o_t_idx ON o_t (a)", "must be owner of table o_t"),
            ("DROP TABLE o_t", "must be owner of table o_t"),
        ],
        "DROP TABLE o_t",
    ),
    "view": (
        "CREATE VIEW o_v AS SELECT 1 AS a",
        [
            ("CREATE OR REPLACE VIEW o_v AS SELECT 'FORGED' AS a", "must be owner of view o_v"),
            ("ALTER VIEW o_v RENAME TO o_v2", "must be owner of view o_v"),
            ("DROP VIEW o_v", "must be owner of view o_v"),
        ],
        "DROP VIEW o_v",
    ),
    "matview": (
        "CREATE MATERIALIZED VIEW o_mv AS SELECT 1 AS a",
        [
            ("REFRESH MATERIALIZED VIEW o_mv", "must be owner of materialized view o_mv"),
            ("DROP MATERIALIZED VIEW o_mv", "must be owner of materialized view o_mv"),
            (
                "ALTER MATERIALIZED VIEW o_mv RENAME TO o_mv2",
                "must be owner of materialized view o_mv",
            ),
            (
                "ALTER MATERIALIZED VIEW o_mv RENAME COLUMN a TO b",
                "must be owner of materialized view o_mv",
            ),
            (
                "COMMENT ON MATERIALIZED VIEW o_mv IS 'forged'",
                "must be owner of materialized view o_mv",
            ),
            ("CREATE INDEX ON o_mv (a)", "must be owner of materialized view o_mv"),
        ],
        "DROP MATERIALIZED VIEW o_mv",
    ),
    "macro": (
        "CREATE MACRO o_m(x) AS x + 1",
        [
            ("CREATE OR REPLACE MACRO o_m(x) AS 42", "must be owner of function o_m"),
            ("CREATE OR REPLACE FUNCTION o_m(x) AS 42", "must be owner of function o_m"),
            ("DROP MACRO o_m", "must be owner of function o_m"),
            ("DROP FUNCTION o_m", "must be owner of function o_m"),
            ("COMMENT ON FUNCTION o_m(integer) IS 'x'", "must be owner of function o_m"),
        ],
        "DROP MACRO o_m",
    ),
    "sequence": (
        "CREATE SEQUENCE o_s",
        [
            ("DROP SEQUENCE o_s", "must be owner of sequence o_s"),
            ("ALTER SEQUENCE o_s RENAME TO o_s2", "must be owner of sequence o_s"),
            ("ALTER TABLE o_s RENAME TO o_s2", "must be owner of sequence o_s"),
        ],
        "DROP SEQUENCE o_s",
    ),
    "schema": (
        "CREATE SCHEMA o_sch",
        [("DROP SCHEMA o_sch CASCADE", "must be owner of schema o_sch")],
        "DROP SCHEMA o_sch",
    ),
    "type": (
        "CREATE TYPE o_ty AS ENUM ('a', 'b')",
        [
            ("DROP TYPE o_ty", "must be owner of type o_ty"),
            ("ALTER TYPE o_ty ADD VALUE 'c'", "must be owner of type o_ty"),
            ("ALTER TYPE o_ty RENAME VALUE 'a' TO 'z'", "must be owner of type o_ty"),
        ],
        "DROP TYPE o_ty",
    ),
}


@pytest.mark.parametrize("kind", list(OBJECTS))
@pytest.mark.parametrize("owner", ["alice", "root"])
def test_only_the_owner_or_a_superuser_changes_an_object(
    ks: KeyedServer, kind: str, owner: str
) -> None:
    create, attempts, drop = OBJECTS[kind]
    others = [w for w in ("alice", "bob", "adm") if w != owner]
    with connect(ks, owner) as con:
        con.execute(create)
    try:
        for who in others:
            with connect(ks, who) as con:
                for sql, message in attempts:
                    refused(con, sql, message)
        with connect(ks, owner) as con:  # still there, unchanged
            assert con.execute(f"SELECT count(*) FROM ({_probe(kind)})").fetchone() == (1,)
    finally:
        with connect(ks, owner) as con:
            con.execute(drop)  # the owner (or the superuser) may


def _probe(kind: str) -> str:
    return {
        "table": "SELECT * FROM duckdb_tables() WHERE table_name = 'o_t'",
        "view": "SELECT * FROM o_v WHERE a = 1",
        "matview": "SELECT * FROM o_mv WHERE a = 1",
        "macro": "SELECT o_m(1) AS r WHERE o_m(1) = 2",
        "sequence": "SELECT * FROM duckdb_sequences() WHERE sequence_name = 'o_s'",
        "schema": "SELECT * FROM duckdb_schemas() WHERE schema_name = 'o_sch'",
        "type": "SELECT * FROM duckdb_types() WHERE type_name = 'o_ty'",
    }[kind]


def test_owner_changes_its_own_and_a_superuser_changes_anything(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice:
        alice.execute("CREATE TABLE mine (a INT)")
        alice.execute("ALTER TABLE mine ADD COLUMN b INT")
        alice.execute("COMMENT ON TABLE mine IS 'alice''s'")
        alice.execute("ALTER TABLE mine RENAME TO mine2")  # renames carry the owner
        alice.execute("CREATE INDEX mine_a ON mine2 (a)")
    with connect(ks, "bob") as bob:
        refused(bob, "DROP TABLE mine2", "must be owner of table mine2")
        refused(bob, "DROP INDEX mine_a", "must be owner of index mine_a")
        bob.execute("CREATE TABLE bobs (a INT)")
        # Every object of a multi-object DROP is checked before any is dropped.
        refused(bob, "DROP TABLE bobs, mine2", "must be owner of table mine2")
        assert bob.execute("SELECT count(*) FROM bobs").fetchone() == (0,)
        bob.execute("DROP TABLE bobs")
    with connect(ks, "root") as root:
        root.execute("ALTER TABLE mine2 ADD COLUMN c INT")
        owner = "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'mine2'"
        assert root.execute(owner).fetchone() == ("alice@orga",)
    # psql shows the owner: the key's organisation and agent, not the name it logged in as
    # (to its organisation: another's keys are not shown its tables, test_org_catalogs.py)
    assert "alice@orga" in psql(ks, "adma", r"\dt mine2")
    assert "mine2" not in psql(ks, "bob", r"\dt")
    restart(ks)  # owners persist
    with connect(ks, "bob") as bob:
        refused(bob, "DROP TABLE mine2", "must be owner of table mine2")
    with connect(ks, "alice") as alice:
        alice.execute("DROP TABLE mine2")


def test_objects_from_before_belong_to_the_superuser(ks: KeyedServer) -> None:
    with connect(ks, "root") as root:
        root.execute("CREATE TABLE shared (a INT)")
    for who in ("alice", "adm"):
        with connect(ks, who) as con:
            refused(con, "DROP TABLE shared", "must be owner of table shared")
            con.execute("INSERT INTO shared VALUES (1)")  # rows are not ownership


def test_ddl_cannot_be_smuggled_in_prepared_statements_or_query(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice:
        alice.execute("CREATE TABLE prep (a INT)")
    with connect(ks, "bob") as bob:
        # As in PostgreSQL, only queries and DML can be prepared.
        with pytest.raises(psycopg.errors.SyntaxError):
            bob.execute("PREPARE d AS DROP TABLE prep")
        # query() runs SQL text DuckDB refuses to be DDL; keys may not call it at all.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute("SELECT * FROM query('DROP TABLE prep')")
    with connect(ks, "alice") as alice:
        assert alice.execute("SELECT count(*) FROM prep").fetchone() == (0,)
        alice.execute("DROP TABLE prep")


def test_rotating_a_key_keeps_what_it_owns(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice:
        alice.execute("CREATE TABLE rot (a INT)")
    listed = requests.get(
        f"{ks.server.rest_url}/v1/organizations/orga/agent-keys",
        headers={"Authorization": f"ApiKey {ks.secrets['adma']}"},
        timeout=30,
    )
    key_id = next(k["key_id"] for k in listed.json() if k["agent_id"] == "alice")
    rotated = requests.post(
        f"{ks.server.rest_url}/v1/organizations/orga/agent-keys/{key_id}/rotate",
        headers={"Authorization": f"ApiKey {ks.secrets['adma']}"},
        timeout=30,
    )
    assert rotated.status_code == 200, rotated.text
    ks.secrets["alice"] = rotated.json()["new_key"]
    with connect(ks, "adma") as adma:  # an organisation key is another login
        refused(adma, "DROP TABLE rot", "must be owner of table rot")
    with connect(ks, "alice") as alice:
        alice.execute("DROP TABLE rot")


def test_ownership_holds_over_mcp_too(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice:
        alice.execute("CREATE TABLE over_mcp (a INT)")
    for who, ok in (("bob", False), ("alice", True)):
        error, text = mcp_query(ks, who, "DROP TABLE over_mcp")
        assert error is not ok, text
        if not ok:
            assert "must be owner of table over_mcp" in text


def test_set_schema_carries_the_owner(ks: KeyedServer) -> None:
    """ALTER TABLE ... SET SCHEMA (proxy/pgserver/set_schema.py) moves the object with its
    owner, as a rename does; only the owner may move it."""
    with connect(ks, "alice") as alice:
        alice.execute("CREATE SCHEMA alice_moves")
        alice.execute("CREATE TABLE moved (a INT)")
        alice.execute("ALTER TABLE moved SET SCHEMA alice_moves")
        alice.execute("ALTER TABLE alice_moves.moved ADD COLUMN b INT")
    with connect(ks, "bob") as bob:
        refused(
            bob, "ALTER TABLE alice_moves.moved SET SCHEMA public", "must be owner of table moved"
        )
        refused(bob, "DROP TABLE alice_moves.moved", "must be owner of table moved")
    with connect(ks, "root") as root:
        owner = "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'moved'"
        assert root.execute(owner).fetchone() == ("alice@orga",)
    with connect(ks, "alice") as alice:
        alice.execute("DROP TABLE alice_moves.moved")


def test_a_renamed_sequence_keeps_its_owner(ks: KeyedServer) -> None:
    """Renames of a sequence (Rails' rename_table too) carry its owner record along."""
    with connect(ks, "alice") as alice:
        alice.execute("CREATE SEQUENCE o_r")
        alice.execute("ALTER SEQUENCE o_r RENAME TO o_r2")
    with connect(ks, "bob") as bob:
        refused(bob, "DROP SEQUENCE o_r2", "must be owner of sequence o_r2")
    with connect(ks, "alice") as alice:
        alice.execute("ALTER TABLE o_r2 RENAME TO o_r3")
    with connect(ks, "bob") as bob:
        refused(bob, "ALTER SEQUENCE o_r3 RENAME TO o_r4", "must be owner of sequence o_r3")
    with connect(ks, "alice") as alice:
        alice.execute("DROP SEQUENCE o_r3")
        alice.execute("CREATE TABLE o_rt (id int PRIMARY KEY)")
    with connect(ks, "adm") as adm:  # its key's index: the table's owner's
        for sql in ("ALTER INDEX o_rt_pkey RENAME TO o_x", "ALTER TABLE o_rt_pkey RENAME TO o_x"):
            # orgb's catalogs do not list orga's table, nor so its key's index
            with pytest.raises(psycopg.errors.UndefinedTable):
                adm.execute(sql)  # type: ignore[arg-type]
    with connect(ks, "alice") as alice:
        alice.execute("ALTER INDEX o_rt_pkey RENAME TO o_rt_key")
        alice.execute("DROP TABLE o_rt")


def test_a_tables_triggers_are_its_owners(ks: KeyedServer) -> None:
    """A BEFORE ROW trigger rewrites every later INSERT / UPDATE of its table, whoever
    sends it: only the table's owner (or a superuser) adds, drops or switches one, as in
    PostgreSQL; another login's trigger function is its own to drop."""
    fn = "RETURNS trigger LANGUAGE plpgsql AS $$BEGIN NEW.a := 7; RETURN NEW; END$$"
    with connect(ks, "alice") as alice:  # not a superuser: her own objects only
        alice.execute("CREATE TABLE o_trg_t (a INT)")
        alice.execute(f"CREATE FUNCTION o_trg_fn() {fn}")
        alice.execute(
            "CREATE TRIGGER o_trg BEFORE INSERT ON o_trg_t FOR EACH ROW EXECUTE FUNCTION o_trg_fn()"
        )
    try:
        with connect(ks, "bob") as bob:
            bob.execute(f"CREATE FUNCTION o_trg_bob() {fn}")
            refused(
                bob,
                "CREATE TRIGGER o_trg_b BEFORE INSERT ON o_trg_t FOR EACH ROW"
                " EXECUTE FUNCTION o_trg_bob()",
                "must be owner of table o_trg_t",
            )
            refused(bob, "DROP TRIGGER o_trg ON o_trg_t", "must be owner of table o_trg_t")
            refused(
                bob, "ALTER TABLE o_trg_t DISABLE TRIGGER ALL", "must be owner of table o_trg_t"
            )
            refused(bob, "DROP FUNCTION o_trg_fn()", "must be owner of function o_trg_fn")
            bob.execute("DROP FUNCTION o_trg_bob()")
        with connect(ks, "alice") as alice:
            alice.execute("INSERT INTO o_trg_t VALUES (1)")
            assert alice.execute("SELECT a FROM o_trg_t").fetchall() == [(7,)]
    finally:
        with connect(ks, "alice") as alice:
            alice.execute("DROP TABLE o_trg_t")
            alice.execute("DROP FUNCTION o_trg_fn()")


def test_a_login_makes_and_owns_functions_and_domains(ks: KeyedServer) -> None:
    """SQL functions and domains keep their declarations in the server's registries; a
    login that is not a superuser still makes, uses and drops its own, and only those."""
    with connect(ks, "alice") as alice:
        alice.execute("CREATE FUNCTION o_twice(x int) RETURNS int LANGUAGE sql AS 'SELECT x * 2'")
        alice.execute("CREATE DOMAIN o_pos AS int CHECK (VALUE > 0)")
        assert alice.execute("SELECT o_twice(21), 5::o_pos").fetchone() == (42, 5)
    try:
        with connect(ks, "bob") as bob:
            refused(bob, "DROP FUNCTION o_twice(int)", "must be owner of function o_twice")
            refused(bob, "DROP DOMAIN o_pos", "must be owner of type o_pos")
            refused(
                bob, "ALTER DOMAIN o_pos DROP CONSTRAINT o_pos_check", "must be owner of type o_pos"
            )
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                bob.execute("INSERT INTO main.__hati_routines SELECT * FROM main.__hati_routines")
    finally:
        with connect(ks, "alice") as alice:
            alice.execute("DROP FUNCTION o_twice(int)")
            alice.execute("DROP DOMAIN o_pos")
