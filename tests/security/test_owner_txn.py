"""Owner records follow the transaction, over the wire with two logins.

A DDL inside a block that rolls back (ROLLBACK, a failed block's COMMIT, an implicit
block that fails, ROLLBACK TO a savepoint) leaves the owners as they were: a rolled
back DROP or RENAME once took the owner's own table away from it, and a rolled back
CREATE left a record for a table that does not exist. TRUNCATE needs the table's owner
(PostgreSQL's TRUNCATE privilege).
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import start_server
from tests.rest.rest_support import KeyedServer, KeySpec, create_keys

SPECS = {
    "alice": KeySpec("agent", org_id="orga", agent_id="alice"),
    "bob": KeySpec("agent", org_id="orgb", agent_id="bob"),
}


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    tmp = tmp_path_factory.mktemp("owner_txn")
    secrets = create_keys(tmp / "data", SPECS)
    server = KeyedServer(
        start_server(tmp, "--users", "root:rootpw", "--embedding-provider", "hash"), secrets
    )
    yield server
    server.server.stop()


def connect(ks: KeyedServer, who: str) -> psycopg.Connection:
    password = "rootpw" if who == "root" else ks.secrets[who]
    return psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user="root" if who == "root" else "postgres",
        password=password, dbname="hatidata", autocommit=True,
    )  # fmt: skip


def not_owner(con: psycopg.Connection, sql: str, message: str) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
        con.execute(sql)
    assert info.value.diag.message_primary == message, sql


def recorded(ks: KeyedServer, name: str) -> list[str]:
    """The owner shown for `name` (the catalog mirror psql's Owner column reads)."""
    with connect(ks, "root") as root:
        rows = root.execute(
            "SELECT r.rolname FROM pg_catalog.__hati_owners o JOIN pg_catalog.__hati_roles r"
            " ON r.oid = o.owner_oid WHERE o.name = %s",
            [name],
        ).fetchall()
    return [r[0] for r in rows]


def test_rolled_back_create_leaves_no_owner(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice, connect(ks, "bob") as bob:
        alice.execute("BEGIN")
        alice.execute("CREATE TABLE tx_c (a INT)")
        alice.execute("ALTER TABLE tx_c ADD COLUMN b INT")  # its own, in the same block
        alice.execute("ROLLBACK")
        assert recorded(ks, "tx_c") == []
        alice.execute("BEGIN")  # a failed block: its COMMIT rolls back
        alice.execute("CREATE TABLE tx_f (a INT)")
        with pytest.raises(psycopg.errors.UndefinedTable):
            alice.execute("SELECT * FROM tx_missing")
        assert alice.execute("COMMIT").statusmessage == "ROLLBACK"
        assert recorded(ks, "tx_f") == []
        # an implicit block (two statements in one Query) that fails
        with pytest.raises(psycopg.errors.UndefinedTable):
            alice.execute("CREATE TABLE tx_i (a INT); SELECT * FROM tx_missing")
        assert recorded(ks, "tx_i") == []
        bob.execute("CREATE TABLE tx_c (a INT)")
        assert recorded(ks, "tx_c") == ["bob@orgb"]
        not_owner(alice, "DROP TABLE tx_c", "must be owner of table tx_c")
        # committed blocks keep their owners
        alice.execute("BEGIN")
        alice.execute("CREATE TABLE tx_k (a INT)")
        alice.execute("COMMIT")
        alice.execute("CREATE TABLE tx_k2 (a INT); CREATE INDEX tx_k2_a ON tx_k2 (a)")
        assert recorded(ks, "tx_k") == recorded(ks, "tx_k2") == ["alice@orga"]
        not_owner(bob, "DROP TABLE tx_k", "must be owner of table tx_k")
        not_owner(bob, "DROP TABLE tx_k2", "must be owner of table tx_k2")


def test_rolled_back_drop_and_rename_keep_the_owner(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice, connect(ks, "bob") as bob:
        alice.execute("CREATE TABLE tx_d (a INT)")
        alice.execute("BEGIN")
        alice.execute("DROP TABLE tx_d")
        alice.execute("ROLLBACK")
        alice.execute("BEGIN")
        alice.execute("ALTER TABLE tx_d RENAME TO tx_d2")
        alice.execute("ROLLBACK")
        with pytest.raises(psycopg.errors.UndefinedTable):
            alice.execute("DROP TABLE tx_d; SELECT * FROM tx_missing")
        assert recorded(ks, "tx_d") == ["alice@orga"]
        assert recorded(ks, "tx_d2") == []
        not_owner(bob, "DROP TABLE tx_d", "must be owner of table tx_d")
        alice.execute("ALTER TABLE tx_d ADD COLUMN b INT")  # still alice's
        alice.execute("DROP TABLE tx_d")


def test_rollback_to_savepoint_undoes_owner_changes(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice, connect(ks, "bob") as bob:
        alice.execute("CREATE TABLE tx_s (a INT)")
        alice.execute("BEGIN")
        alice.execute("SAVEPOINT sp")
        alice.execute("DROP TABLE tx_s")
        alice.execute("CREATE TABLE tx_s1 (a INT)")
        alice.execute("ROLLBACK TO SAVEPOINT sp")
        alice.execute("CREATE TABLE tx_s2 (a INT)")
        alice.execute("ALTER TABLE tx_s2 ADD COLUMN b INT")
        alice.execute("COMMIT")
        assert recorded(ks, "tx_s1") == []
        for name in ("tx_s", "tx_s2"):
            assert recorded(ks, name) == ["alice@orga"], name
            not_owner(bob, f"DROP TABLE {name}", f"must be owner of table {name}")
            alice.execute(f"DROP TABLE {name}")


def test_truncate_needs_the_owner(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice, connect(ks, "bob") as bob, connect(ks, "root") as root:
        alice.execute("CREATE TABLE tx_t (a INT)")
        alice.execute("INSERT INTO tx_t VALUES (1), (2)")
        not_owner(bob, "TRUNCATE tx_t", "permission denied for table tx_t")
        not_owner(bob, "TRUNCATE TABLE public.tx_t", "permission denied for table tx_t")
        assert alice.execute("SELECT count(*) FROM tx_t").fetchone() == (2,)
        alice.execute("TRUNCATE tx_t")
        assert alice.execute("SELECT count(*) FROM tx_t").fetchone() == (0,)
        alice.execute("INSERT INTO tx_t VALUES (3)")
        root.execute("TRUNCATE tx_t")  # a server superuser may
        assert alice.execute("SELECT count(*) FROM tx_t").fetchone() == (0,)
