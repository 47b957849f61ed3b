"""Ownership errors, differentially: the same refusals on PostgreSQL 15 and on hatiproxy.

On PostgreSQL, alice and bob are ordinary roles with CREATE on the database and on
public; on hatiproxy they are agent keys of two organisations. alice creates one object
of each kind; bob's attempts to change them, and anybody's to change pg_catalog, must
fail with the same SQLSTATE and primary message on both sides.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "differential"))
from pgcluster import start_pg  # noqa: E402

from tests.conftest import start_server  # noqa: E402
from tests.rest.rest_support import KeyedServer, KeySpec, create_keys  # noqa: E402

# (PostgreSQL, hatiproxy) when the two spell an object differently (SQL function / macro)
CREATE = [
    "CREATE TABLE o_t (a INT)",
    "CREATE VIEW o_v AS SELECT 1 AS a",
    (
        "CREATE FUNCTION o_m(x int) RETURNS int AS 'SELECT x + 1' LANGUAGE sql",
        "CREATE MACRO o_m(x) AS x + 1",
    ),
    "CREATE SEQUENCE o_s",
    "CREATE INDEX o_i ON o_t (a)",
    "CREATE SCHEMA o_sch",
    "CREATE TYPE o_ty AS ENUM ('a')",
]
REFUSED = [
    "ALTER TABLE o_t ADD COLUMN b INT",
    "ALTER TABLE o_t RENAME TO x",
    "COMMENT ON TABLE o_t IS 'x'",
    "CREATE INDEX o_t_idx ON o_t (a)",
    "DROP TABLE o_t",
    "TRUNCATE o_t",
    "TRUNCATE TABLE public.o_t",
    "CREATE OR REPLACE VIEW o_v AS SELECT 2 AS a",
    "ALTER VIEW o_v RENAME TO w",
    "DROP VIEW o_v",
    (
        "CREATE OR REPLACE FUNCTION o_m(x int) RETURNS int AS 'SELECT 42' LANGUAGE sql",
        "CREATE OR REPLACE MACRO o_m(x) AS 42",
    ),
    "DROP FUNCTION o_m(int)",
    "DROP SEQUENCE o_s",
    "DROP INDEX o_i",
    "DROP SCHEMA o_sch CASCADE",
    "DROP TYPE o_ty",
    "CREATE OR REPLACE VIEW pg_catalog.pg_namespace AS SELECT 1 AS oid",
    "CREATE VIEW pg_catalog.myview AS SELECT 1",
    "CREATE TABLE information_schema.forged (a INT)",
    "DROP TABLE pg_catalog.pg_class",
    "INSERT INTO pg_catalog.pg_type (oid, typname) VALUES (1, 'forged')",
    "ALTER TABLE information_schema.tables RENAME TO gone",
]


def _pick(entry: str | tuple[str, str], side: int) -> str:
    return entry if isinstance(entry, str) else entry[side]


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    pg = start_pg()
    tmp = tmp_path_factory.mktemp("ownership_pg")
    specs = {
        "alice": KeySpec("agent", org_id="orga", agent_id="alice"),
        "bob": KeySpec("agent", org_id="orgb", agent_id="bob"),
    }
    secrets = create_keys(tmp / "data", specs)  # before the server holds the file
    hati = KeyedServer(start_server(tmp, "--embedding-provider", "hash"), secrets)
    try:
        with psycopg.connect(pg.dsn, autocommit=True) as su:
            su.execute(
                "CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN; "
                "GRANT CREATE ON SCHEMA public TO alice, bob; "
                "GRANT CREATE ON DATABASE postgres TO alice, bob"
            )

        def pg_conn(user: str) -> psycopg.Connection:
            return psycopg.connect(pg.dsn.replace("user=postgres", f"user={user}"), autocommit=True)

        def hati_conn(user: str) -> psycopg.Connection:
            return psycopg.connect(
                host="127.0.0.1", port=hati.server.port, user=user, password=secrets[user],
                dbname="hatidata", autocommit=True,
            )  # fmt: skip

        conns = {
            "pg": (pg_conn("alice"), pg_conn("bob")),
            "hati": (hati_conn("alice"), hati_conn("bob")),
        }
        for side, (alice, _) in enumerate((conns["pg"], conns["hati"])):
            for entry in CREATE:
                alice.execute(_pick(entry, side))
        yield conns
        for a, b in conns.values():
            a.close()
            b.close()
    finally:
        hati.server.stop()
        pg.stop()


def _outcome(conn: psycopg.Connection, sql: str) -> tuple[str, str]:
    try:
        conn.execute("BEGIN")
        conn.execute(sql)
        return ("00000", "")
    except psycopg.Error as exc:
        return (exc.sqlstate or "", exc.diag.message_primary or "")
    finally:
        conn.execute("ROLLBACK")


@pytest.mark.parametrize("entry", REFUSED, ids=lambda e: _pick(e, 0)[:50])
def test_refusals_match_postgresql(sides: dict, entry: str | tuple[str, str]) -> None:
    pg = _outcome(sides["pg"][1], _pick(entry, 0))
    hati = _outcome(sides["hati"][1], _pick(entry, 1))
    assert pg[0] == "42501", pg
    assert hati == pg
