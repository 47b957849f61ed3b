"""proxy.access.sql_policy: read-only keys change nothing (25006), only admins reach outside
the database (42501), keyless sessions keep full access. Unit checks on transpiled
statements, then the same over the wire with real API keys."""

from __future__ import annotations

import psycopg
import pytest
import requests

import proxy.agent.memory.service  # noqa: F401  (registers the agent functions)
from proxy.access import sql_policy
from proxy.access.scopes import ROLES
from proxy.core.identity import Identity
from proxy.db import settings
from proxy.wire.errors import PgError
from tests.conftest import start_server
from tests.rest.rest_support import KeySpec, keyed_server
from transpiler import transpile
from transpiler.external_access import PG_SESSION_SETTINGS

ANALYST = Identity("o", "a", scopes=ROLES["analyst"], role="analyst")
AGENT = Identity("o", "a", scopes=ROLES["agent"], role="agent")
ADMIN = Identity("o", "a", scopes=ROLES["admin"], role="admin")
TRUST = Identity("o", "a")


def refused(sql: str, who: Identity) -> PgError | None:
    try:
        for st in transpile(sql):
            sql_policy.check(st, who)
    except PgError as exc:
        return exc
    return None


@pytest.mark.parametrize(
    ("sql", "tag"),
    [
        ("INSERT INTO t VALUES (1)", "INSERT"),
        ("UPDATE t SET a = 1", "UPDATE"),
        ("DELETE FROM t", "DELETE"),
        ("MERGE INTO t USING u ON t.a = u.a WHEN MATCHED THEN DELETE", "MERGE"),
        ("CREATE TABLE u (x INT)", "CREATE TABLE"),
        ("CREATE TEMP TABLE u (x INT)", "CREATE TABLE"),
        ("CREATE TABLE u AS SELECT 1", "CREATE TABLE AS"),
        ("SELECT 1 AS a INTO u", "SELECT INTO"),
        ("DROP TABLE t", "DROP TABLE"),
        ("ALTER TABLE t ADD COLUMN c INT", "ALTER TABLE"),
        ("TRUNCATE t", "TRUNCATE TABLE"),
        ("COPY t FROM STDIN", "COPY FROM"),
        ("SELECT nextval('s')", "nextval()"),
        ("SELECT setval('s', 5)", "setval()"),
        ("SELECT * FROM store_memory('x')", "store_memory()"),
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "DELETE"),
        ("EXPLAIN ANALYZE INSERT INTO t VALUES (1)", "INSERT"),
        ("PREPARE p AS DELETE FROM t", "DELETE"),
        ("CHECKPOINT", "CHECKPOINT"),
    ],
)
def test_read_only_refuses_writes(sql: str, tag: str) -> None:
    exc = refused(sql, ANALYST)
    assert exc is not None and exc.sqlstate == "25006", sql
    assert exc.message == f"cannot execute {tag} in a read-only transaction"
    assert refused(sql, AGENT) is None  # query:write: the same statement passes


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM t",
        "VALUES (1)",
        "SELECT * FROM t FOR UPDATE",
        'SELECT "insert", "update" FROM t',
        "SELECT * FROM search_memory('x')",
        "EXPLAIN SELECT * FROM t",
        "EXPLAIN INSERT INTO t VALUES (1)",
        "EXPLAIN ANALYZE SELECT * FROM t",
        "SHOW search_path",
        "SET application_name = 'r'",
        "RESET ALL",
        "BEGIN; SAVEPOINT s; ROLLBACK TO s; COMMIT",
        "DISCARD ALL",
        "DEALLOCATE ALL",
        "DECLARE c CURSOR FOR SELECT * FROM t",
        "FETCH 10 FROM c",
        "CLOSE c",
        "COPY t TO STDOUT",
        "COPY (SELECT * FROM t) TO STDOUT WITH (FORMAT csv)",
        "PREPARE p AS SELECT * FROM t",
        "EXECUTE p",
    ],
)
def test_read_only_allows_reads(sql: str) -> None:
    assert refused(sql, ANALYST) is None, sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM 'x.csv'",
        "SELECT * FROM x.csv",
        "COPY t TO '/tmp/x.csv'",
        "ATTACH 'x.db' AS x",
        "INSTALL httpfs",
        "LOAD httpfs",
        "PRAGMA database_list",
        "SET threads = 1",
        "SELECT * FROM query('SELECT 1')",
        "CREATE SECRET (TYPE s3)",
    ],
)
def test_outside_access_is_for_superusers(sql: str) -> None:
    """Server files are shared by every organisation: an organisation's admin key is
    refused like any other key; only keyless logins (trust, configured users) pass."""
    for who in (ANALYST, AGENT, ADMIN):
        exc = refused(sql, who)
        assert exc is not None and exc.sqlstate == "42501", (sql, who.role)
        assert exc.message.endswith("reads or writes server files; only superusers may")
        assert exc.hint and "superuser" in exc.hint
    assert refused(sql, TRUST) is None
    assert sql_policy.check(transpile(sql)[0], None) is None


def test_duckdb_tokens_back_up_the_transpiler() -> None:
    """A call found only by DuckDB's own tokenizer is still refused."""
    (st,) = transpile("SELECT 1")
    from dataclasses import replace

    hidden = replace(st, sql="SELECT * FROM \"read_text\" /* x */ ('/etc/passwd')")
    with pytest.raises(PgError, match="read_text"):
        sql_policy.check(hidden, AGENT)


def test_read_only_admin_key_has_neither_files_nor_writes() -> None:
    who = Identity("o", "a", scopes=ROLES["analyst"], role="admin")
    assert refused("SELECT * FROM read_csv('x')", who).sqlstate == "42501"
    assert refused("INSERT INTO t VALUES (1)", who).sqlstate == "25006"


def test_session_settings_list_matches_the_server() -> None:
    """The transpiler's list of Postgres settings is the one proxy/db/settings.py answers."""
    assert {name.lower() for name in settings.DEFAULTS} == PG_SESSION_SETTINGS


# --- over the wire, with API keys -----------------------------------------------------

SPECS = {
    "admin": KeySpec("admin"),
    "ro": KeySpec("analyst"),
    "bot": KeySpec("agent", agent_id="bot"),
}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    server = keyed_server(tmp_path_factory.mktemp("policy"), SPECS, "--users", "root:rootpw")
    csv = server.server.data_dir / "people.csv"
    csv.write_text("id,name\n1,ann\n")
    with connect(server, "admin") as conn:
        conn.execute("CREATE TABLE p (id INT, name TEXT)")
        conn.execute("INSERT INTO p VALUES (1, 'a'), (2, 'b')")
        conn.execute("CREATE SEQUENCE seq")
    yield server, str(csv)
    server.server.stop()


def connect(ks, key: str, **kw) -> psycopg.Connection:
    return psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user="anyone", password=ks.secrets[key],
        dbname="hatidata", autocommit=True, **kw,
    )  # fmt: skip


def test_wire_read_only_key(keyed) -> None:
    server, _ = keyed
    with connect(server, "ro") as conn:
        for sql in (
            "INSERT INTO p VALUES (3, 'c')",
            "UPDATE p SET name = 'z'",
            "DELETE FROM p",
            "TRUNCATE p",
            "CREATE TABLE u (x INT)",
            "CREATE TABLE u AS SELECT * FROM p",
            "DROP TABLE p",
            "SELECT * FROM store_memory('read-only keys must not write')",
            "SELECT 1 AS x INTO q",
            "SELECT nextval('seq')",
            "CREATE TEMP TABLE tmp AS SELECT 1",
            "EXPLAIN ANALYZE DELETE FROM p",
        ):
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction, match="read-only"):
                conn.execute(sql)
        # The connection is still usable: reads, settings, cursors, COPY TO STDOUT.
        assert conn.execute("SELECT count(*) FROM p").fetchone() == (2,)
        conn.execute("SET application_name = 'reader'")
        with conn.transaction():
            conn.execute("SELECT * FROM search_memory('anything')").fetchall()
        with conn.transaction(), conn.cursor(name="srv") as cur:
            cur.execute("SELECT id FROM p ORDER BY id")
            assert cur.fetchall() == [(1,), (2,)]
        with conn.cursor().copy("COPY p TO STDOUT") as copy:
            assert b"".join(bytes(b) for b in copy) == b"1\ta\n2\tb\n"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("COPY p FROM STDIN")
    with connect(server, "admin") as conn:
        assert conn.execute("SELECT count(*) FROM p").fetchone() == (2,)


def test_read_only_key_is_read_only_over_mcp_too(keyed) -> None:
    server, _ = keyed
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": "query", "arguments": {"sql": "DELETE FROM p"}}
    r = requests.post(server.server.mcp_url, json=body, headers=server.headers("ro"), timeout=30)
    text = r.json()["result"]["content"][0]["text"]
    assert r.json()["result"]["isError"] and "read-only" in text


def test_wire_server_files_are_for_superusers(keyed) -> None:
    server, csv = keyed
    for key in ("ro", "bot", "admin"):
        with connect(server, key) as conn:
            for sql in (
                f"SELECT * FROM read_csv('{csv}')",
                f"SELECT * FROM '{csv}'",
                f"WITH x AS (SELECT * FROM \"READ_CSV_AUTO\"('{csv}')) SELECT * FROM x",
                "SET threads = 1",
                "SELECT * FROM query('SELECT 1')",
            ):
                with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only superusers"):
                    conn.execute(sql)
            assert conn.execute("SELECT 1").fetchone() == (1,)
    with psycopg.connect(
        host="127.0.0.1", port=server.server.port, user="root", password="rootpw",
        dbname="hatidata", autocommit=True,
    ) as conn:  # fmt: skip
        assert conn.execute(f"SELECT name FROM read_csv('{csv}')").fetchall() == [("ann",)]


def test_wire_agent_key_writes(keyed) -> None:
    server, _ = keyed
    with connect(server, "bot") as conn:
        conn.execute("INSERT INTO p VALUES (9, 'bot')")
        assert conn.execute("SELECT nextval('seq')").fetchone() == (1,)
        conn.execute("DELETE FROM p WHERE id = 9")
        # Extended protocol: the check runs at Parse, before anything is bound.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT * FROM read_text(%s)", ["/etc/hostname"])


def test_trust_session_keeps_full_access(tmp_path) -> None:
    server = start_server(tmp_path, "--database", ":memory:")
    csv = tmp_path / "t.csv"
    csv.write_text("a\n7\n")
    try:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            assert conn.execute(f"SELECT a FROM read_csv('{csv}')").fetchone() == (7,)
            assert conn.execute(f"SELECT a FROM '{csv}'").fetchone() == (7,)
            conn.execute("SET threads = 2")
            conn.execute("CREATE TABLE w (a INT)")
            conn.execute(f"COPY w FROM '{csv}' (HEADER)")
            assert conn.execute("SELECT a FROM w").fetchone() == (7,)
    finally:
        server.stop()
