"""What a key may run over SQL (proxy/sql_policy.py), end to end on the wire and MCP:
read-only keys change nothing (25006), only admins reach server files (42501)."""

from __future__ import annotations

import psycopg
import pytest
import requests

from tests.rest.rest_support import KeySpec, keyed_server

SPECS = {"admin": KeySpec("admin"), "ro": KeySpec("analyst"), "bot": KeySpec("agent", agent_id="b")}


@pytest.fixture(scope="module")
def ks(tmp_path_factory):
    server = keyed_server(tmp_path_factory.mktemp("guard"), SPECS)
    csv = server.server.data_dir / "people.csv"
    csv.write_text("id,name\n1,ann\n")
    with connect(server, "admin") as conn:
        conn.execute("CREATE TABLE t (id INT, name TEXT)")
        conn.execute("INSERT INTO t VALUES (1, 'a')")
        conn.execute("CREATE SEQUENCE s")
    yield server, str(csv)
    server.server.stop()


def connect(ks, key: str) -> psycopg.Connection:
    return psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user="u", password=ks.secrets[key],
        dbname="x", autocommit=True,
    )  # fmt: skip


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (2, 'b')",
        "UPDATE t SET name = 'z'",
        "DELETE FROM t",
        "CREATE TABLE u (x INT)",
        "DROP TABLE t",
        "CREATE TABLE u AS SELECT * FROM t",
        "SELECT nextval('s')",
        "SELECT * FROM store_memory('read-only keys must not write')",
        "TRUNCATE t",
    ],
)
def test_read_only_key_changes_nothing_on_the_wire(ks, sql: str) -> None:
    server, _ = ks
    with connect(server, "ro") as conn:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction, match="read-only"):
            conn.execute(sql)
        # Reads, settings and transactions still work on the same connection.
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (1,)
        conn.execute("SET application_name = 'reader'")
        conn.execute("BEGIN")
        conn.execute("SELECT * FROM search_memory('anything')").fetchall()
        conn.execute("COMMIT")


def test_read_only_key_is_read_only_over_mcp_too(ks) -> None:
    server, _ = ks
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": "query", "arguments": {"sql": "DELETE FROM t"}}
    r = requests.post(server.server.mcp_url, json=body, headers=server.headers("ro"), timeout=30)
    text = r.json()["result"]["content"][0]["text"]
    assert r.json()["result"]["isError"] and "read-only" in text


def test_only_admins_read_server_files(ks) -> None:
    server, csv = ks
    for key in ("ro", "bot"):
        with connect(server, key) as conn:
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only admin keys"):
                conn.execute(f"SELECT * FROM read_csv('{csv}')")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"SELECT * FROM '{csv}'")
    with connect(server, "admin") as conn:
        assert conn.execute(f"SELECT name FROM read_csv('{csv}')").fetchall() == [("ann",)]


def test_agent_key_writes_its_own_tables(ks) -> None:
    server, _ = ks
    with connect(server, "bot") as conn:
        conn.execute("INSERT INTO t VALUES (3, 'bot')")
        assert conn.execute("SELECT count(*) FROM t WHERE id = 3").fetchone() == (1,)
        conn.execute("DELETE FROM t WHERE id = 3")
