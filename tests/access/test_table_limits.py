"""allowed_schemas / allowed_tables on a live server: a limited key names only its
relations on the wire and through MCP's SQL tools (42501 naming the relation), while
the catalog, table functions and the agent layer keep working."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import psycopg
import pytest
import requests

from proxy.access import keys
from tests.conftest import ROOT
from tests.rest.rest_support import KeySpec, keyed_server

SPECS = {
    "admin": KeySpec("admin"),
    # The sales schema, and public.ok; nothing else.
    "narrow": KeySpec(
        "agent", agent_id="bot", allowed_schemas=["sales"], allowed_tables=["public.ok"]
    ),
    "manager": KeySpec(
        "admin", allowed_schemas=["sales"], allowed_tables=["ok", "hr.public_holidays"]
    ),
}
SETUP = (
    "CREATE SCHEMA sales",
    "CREATE SCHEMA hr",
    "CREATE TABLE sales.orders (id INT, amount INT)",
    "INSERT INTO sales.orders VALUES (1, 10), (2, 20)",
    "CREATE TABLE ok (id INT)",
    "INSERT INTO ok VALUES (7)",
    "CREATE TABLE secret (code TEXT)",
    "INSERT INTO secret VALUES ('s3cr3t')",
    "CREATE TABLE hr.salaries (who TEXT, pay INT)",
    "CREATE TABLE hr.public_holidays (day DATE)",
)


@pytest.fixture(scope="module")
def ks(tmp_path_factory):
    server = keyed_server(tmp_path_factory.mktemp("limits"), SPECS)
    with connect(server, "admin") as con:
        for sql in SETUP:
            con.execute(sql)
    yield server
    server.server.stop()


def connect(ks, key: str, **kw) -> psycopg.Connection:
    dsn = f"host=127.0.0.1 port={ks.server.port} user=u dbname=hatidata"
    return psycopg.connect(dsn, password=ks.secrets[key], autocommit=True, **kw)


def refused(con: psycopg.Connection, sql: str, relation: str) -> None:
    with pytest.raises(psycopg.Error) as info:
        con.execute(sql)
    assert info.value.sqlstate == "42501", (sql, info.value)
    assert relation in str(info.value), (sql, str(info.value))


ALLOWED = (
    "SELECT sum(amount) FROM sales.orders",
    "SELECT * FROM ok",
    "SELECT * FROM public.ok JOIN main.ok o2 USING (id)",
    'SELECT * FROM "SALES"."ORDERS"',
    "WITH secret AS (SELECT 1 AS x) SELECT * FROM secret",  # a CTE, not the table
    "SELECT * FROM (SELECT id FROM ok) s, (SELECT 1) t",
    "SELECT * FROM range(3)",
    "SELECT count(*) FROM pg_catalog.pg_class",
    "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace",
    "SELECT table_name FROM information_schema.tables",
    "SELECT * FROM search_memory('anything')",  # agent functions are not tables
    "SELECT count(*) FROM _hatidata_agent_memory",  # the caller's own agent data
    "INSERT INTO sales.orders VALUES (3, 30)",
    "CREATE TABLE sales.copy AS SELECT * FROM sales.orders",
    "SHOW search_path",
)
REFUSED = (
    ("SELECT * FROM secret", "relation secret"),
    ("SELECT * FROM hr.salaries", "relation hr.salaries"),
    ("SELECT * FROM public.secret", "relation main.secret"),
    ("SELECT * FROM ok JOIN (SELECT * FROM hr.salaries) s ON true", "hr.salaries"),
    ("SELECT (SELECT max(code) FROM secret)", "relation secret"),
    ("SELECT * FROM (WITH secret AS (SELECT 1) SELECT * FROM secret) a, secret", "secret"),
    ("WITH secret AS (SELECT * FROM secret) SELECT * FROM secret", "relation secret"),
    ("WITH ok AS (SELECT 1) INSERT INTO secret SELECT 'x' FROM ok", "relation secret"),
    ("SELECT * FROM hatidata.main.secret", "main.secret"),  # the database part is dropped
    ("SELECT * FROM db.hr.salaries", "relation hr.salaries"),
    ("SELECT * FROM query_table('secret')", "query_table()"),
    ("CREATE TABLE hr.x (a INT)", "relation hr.x"),
    ("CREATE TABLE sales.leak AS SELECT * FROM secret", "relation secret"),
    ("CREATE SCHEMA finance", "schema finance"),
    ("UPDATE ok SET id = 1 FROM secret", "relation secret"),
    ("EXPLAIN SELECT * FROM secret", "relation secret"),
    ("COPY secret TO STDOUT", "relation secret"),
    ("COPY (SELECT * FROM hr.salaries) TO STDOUT", "hr.salaries"),
    ("PREPARE p AS SELECT * FROM secret", "relation secret"),
    ("DESCRIBE secret", "relation secret"),
    ("USE hr", "USE"),
    ("INSERT INTO pg_class VALUES (1)", "pg_class"),
)


def test_wire_names_only_allowed_relations(ks) -> None:
    with connect(ks, "narrow") as con:
        for sql in ALLOWED:
            con.execute(sql)
        for sql, relation in REFUSED:
            refused(con, sql, relation)
        # The session's search path decides where unqualified names resolve.
        con.execute("SET search_path = hr, public")
        refused(con, "SELECT * FROM ok", "relation ok (in schema hr)")
        con.execute("SET search_path = sales")
        assert con.execute("SELECT count(*) FROM orders").fetchone()[0] >= 2
        con.execute("RESET search_path")
        refused(con, "SET search_path = hr; SELECT * FROM salaries", "salaries")
    # A search path from the startup packet counts too.
    with connect(ks, "narrow", options="-c search_path=hr") as con:
        refused(con, "SELECT * FROM salaries", "salaries")
    with connect(ks, "admin") as con:  # unlimited keys are untouched
        assert con.execute("SELECT code FROM secret").fetchone() == ("s3cr3t",)


def test_cursors_and_extended_protocol(ks) -> None:
    with connect(ks, "narrow") as con:
        assert con.execute("SELECT id FROM ok WHERE id = %s", [7]).fetchone() == (7,)
        with pytest.raises(psycopg.Error) as info:
            con.execute("SELECT code FROM secret WHERE code = %s", ["x"])
        assert info.value.sqlstate == "42501"
        con.autocommit = False
        with pytest.raises(psycopg.Error) as info:
            con.execute("DECLARE c CURSOR FOR SELECT * FROM secret")
        assert info.value.sqlstate == "42501"
        con.rollback()


def mcp(ks, key: str, tool: str, args: dict) -> tuple[bool, str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": tool, "arguments": args}
    r = requests.post(ks.server.mcp_url, json=body, headers=ks.headers(key), timeout=30)
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    return bool(result.get("isError")), result["content"][0]["text"]


def test_mcp_sql_tools(ks) -> None:
    failed, text = mcp(ks, "narrow", "query", {"sql": "SELECT count(*) AS n FROM sales.orders"})
    assert not failed and json.loads(text)[0]["n"] >= 2
    for tool in ("query", "read_query"):
        failed, text = mcp(ks, "narrow", tool, {"sql": "SELECT * FROM hr.salaries"})
        assert failed and "42501" in text and "hr.salaries" in text, text
    failed, text = mcp(ks, "narrow", "list_tables", {})  # the catalog stays readable
    assert not failed and "orders" in text
    failed, text = mcp(ks, "narrow", "describe_table", {"table_name": "sales.orders"})
    assert not failed and "amount" in text


def test_rest_keys_carry_limits_without_widening(ks) -> None:
    base = "/v1/organizations/local"
    body = {"agent_name": "reader", "allowed_schemas": ["sales"], "allowed_tables": ["ok"]}
    r = ks.request("POST", f"{base}/agent-keys", key="admin", json=body)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["allowed_schemas"] == ["sales"] and created["allowed_tables"] == ["main.ok"]
    dsn = f"host=127.0.0.1 port={ks.server.port} user=u dbname=hatidata"
    with psycopg.connect(dsn, password=created["raw_key"], autocommit=True) as con:
        con.execute("SELECT * FROM ok")
        refused(con, "SELECT * FROM secret", "secret")
    # A limited manager grants only within its own limits.
    for wider in (
        {"agent_name": "w1"},
        {"agent_name": "w2", "allowed_schemas": ["hr"]},
        {"agent_name": "w3", "allowed_tables": ["secret"]},
        {"agent_name": "w4", "allowed_tables": ["hr.salaries"]},
    ):
        r = ks.request("POST", f"{base}/agent-keys", key="manager", json=wider)
        assert r.status_code == 403, (wider, r.text)
    within = {"agent_name": "w5", "allowed_tables": ["sales.orders", "hr.public_holidays"]}
    r = ks.request("POST", f"{base}/agent-keys", key="manager", json=within)
    assert r.status_code == 201, r.text
    key_id = r.json()["id"]
    r = ks.request("PUT", f"{base}/agent-keys/{key_id}", key="manager",
                   json={"allowed_tables": None})  # fmt: skip
    assert r.status_code == 403  # lifting a limit is widening too
    # Changing a key's limits applies from its next login.
    r = ks.request("PUT", f"{base}/agent-keys/{created['id']}", key="admin",
                   json={"allowed_schemas": ["hr"]})  # fmt: skip
    assert r.status_code == 200
    with psycopg.connect(dsn, password=created["raw_key"], autocommit=True) as con:
        con.execute("SELECT * FROM hr.salaries")
        refused(con, "SELECT * FROM sales.orders", "sales.orders")


def test_cli_flags_and_migration_of_an_old_database(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = data / "hatiproxy.agent.duckdb"  # keys live in the agent database
    duckdb.connect(str(data / "hatiproxy.duckdb")).close()  # beside the users' file
    # A key table as it was before allowed_schemas / allowed_tables existed.
    con = duckdb.connect(str(db))
    for sql in keys.SCHEMA_SQL[:4]:
        con.execute(sql.replace(", allowed_schemas VARCHAR[]", ""))
    con.execute(
        f"INSERT INTO {keys.T_KEYS} (key_id, org_id, name, role, scopes, key_prefix, key_hash,"
        " created_at) VALUES (uuid(), 'local', 'old', 'admin', ['query:read'], 'hd_live_x',"
        f" '{keys.digest('hd_live_' + 'o' * 32)}', now())"
    )
    con.close()
    out = subprocess.run(
        [sys.executable, "-m", "proxy", "keys", "create", "--role", "analyst", "--data-dir",
         str(data), "--allowed-schemas", "sales, Public", "--allowed-tables", "hr.x", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    made = json.loads(out.stdout)
    assert made["allowed_schemas"] == ["main", "sales"] and made["allowed_tables"] == ["hr.x"]
    con = duckdb.connect(str(db))
    try:
        old = keys.lookup(con, "hd_live_" + "o" * 32)
        assert old is not None and old.allowed_schemas is None and old.limits is None
    finally:
        con.close()


def test_branches_keep_the_limits(ks) -> None:
    with connect(ks, "narrow") as con:
        refused(con, """SELECT * FROM branch_create(tables := '["secret"]')""", "secret")
        bid = con.execute("""SELECT branch_id FROM branch_create(tables := '["ok"]')""")
        bid = bid.fetchone()[0]
        rows = con.execute("SELECT * FROM branch_query(%s, 'SELECT id FROM ok')", [bid])
        assert rows.fetchall() == [({"id": 7},)]
        for sql in ("SELECT * FROM secret", "SELECT * FROM hr.salaries"):
            refused(con, f"SELECT * FROM branch_query('{bid}', '{sql}')", sql.split()[-1])
        # The branch's own copies are judged as the main tables they copy.
        refused(con, f"SELECT * FROM branch_{bid}.secret", f"branch_{bid}.secret")


def test_data_modifying_with(ks) -> None:
    """A DML CTE's RETURNING rows (the connection's temp table) are readable by a
    limited key; the relations the statement names are checked as any statement's."""
    with connect(ks, "admin") as con:
        con.execute("CREATE TABLE sales.returned (id INT)")
        con.execute("INSERT INTO sales.returned VALUES (1), (2)")
    with connect(ks, "narrow") as con:
        rows = con.execute(
            "WITH m AS (DELETE FROM sales.returned WHERE id = 2 RETURNING id) "
            "INSERT INTO sales.returned SELECT id * 10 FROM m RETURNING id"
        ).fetchall()
        assert rows == [(20,)]
        refused(con, "WITH m AS (DELETE FROM secret RETURNING *) SELECT * FROM m", "secret")
    with connect(ks, "admin") as con:
        assert con.execute("SELECT count(*) FROM secret").fetchone() == (1,)


def test_a_trigger_runs_with_the_writers_table_limits(ks) -> None:
    """A trigger's body runs with the invoker's privileges (SECURITY INVOKER): a guard
    reading a table the writer cannot reach is 42501, never that table's data in the
    RAISE message (nor a way around the limit)."""
    with connect(ks, "admin") as admin:
        admin.execute(
            "CREATE FUNCTION leak() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'code %', (SELECT max(code) FROM secret); END $$"
        )
        admin.execute(
            "CREATE TRIGGER leak_t BEFORE DELETE ON ok FOR EACH ROW EXECUTE FUNCTION leak()"
        )
        try:
            with connect(ks, "narrow") as con:
                with pytest.raises(psycopg.Error) as err:
                    con.execute("DELETE FROM ok")
                assert err.value.sqlstate == "42501"
                assert "s3cr3t" not in str(err.value)
                assert "secret" in str(err.value)
            # the admin may read it: the same trigger raises with the value
            with pytest.raises(psycopg.errors.RaiseException, match="code s3cr3t"):
                admin.execute("DELETE FROM ok")
            assert admin.execute("SELECT id FROM ok").fetchall() == [(7,)]
        finally:
            admin.execute("DROP TRIGGER leak_t ON ok")
            admin.execute("DROP FUNCTION leak()")


def test_an_after_trigger_writes_only_where_the_writer_may(ks) -> None:
    """An AFTER trigger's INSERT / DELETE run as the writer (SECURITY INVOKER): a key
    limited to public.ok cannot make its write copy into, or delete from, `secret`
    through a trigger (42501, and the write itself is undone), nor read it into a row it
    may see; the admin's same write runs the trigger."""
    with connect(ks, "admin") as admin:
        admin.execute(
            "CREATE FUNCTION spill() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "INSERT INTO secret VALUES ('from ' || NEW.id); "
            "UPDATE ok SET id = (SELECT length(max(code)) FROM secret) WHERE id = NEW.id; "
            "RETURN NULL; END $$"
        )
        admin.execute(
            "CREATE TRIGGER spill_t AFTER INSERT ON ok FOR EACH ROW EXECUTE FUNCTION spill()"
        )
        admin.execute(
            "CREATE FUNCTION wipe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "DELETE FROM secret; RETURN NULL; END $$"
        )
        admin.execute("CREATE TRIGGER wipe_t AFTER DELETE ON ok EXECUTE FUNCTION wipe()")
        try:
            with connect(ks, "narrow") as con:
                for sql in ("INSERT INTO ok VALUES (8)", "DELETE FROM ok WHERE id = 99"):
                    with pytest.raises(psycopg.Error) as err:
                        con.execute(sql)
                    assert err.value.sqlstate == "42501" and "secret" in str(err.value)
                assert con.execute("SELECT id FROM ok ORDER BY id").fetchall() == [(7,)]
            assert admin.execute("SELECT code FROM secret").fetchall() == [("s3cr3t",)]
            admin.execute("INSERT INTO ok VALUES (8)")
            assert admin.execute("SELECT code FROM secret ORDER BY code").fetchall() == [
                ("from 8",),
                ("s3cr3t",),
            ]
        finally:
            admin.execute("DROP TRIGGER spill_t ON ok")
            admin.execute("DROP TRIGGER wipe_t ON ok")
            admin.execute("DELETE FROM secret WHERE code <> 's3cr3t'")
            admin.execute("DELETE FROM ok WHERE id <> 7")
            admin.execute("DROP FUNCTION spill()")
            admin.execute("DROP FUNCTION wipe()")
