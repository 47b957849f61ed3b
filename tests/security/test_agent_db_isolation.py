"""Agent data out of reach by construction (issue 21): it lives in a database of its own
that client SQL never runs on, so no name built at run time reaches it, and the
`_hatidata_*` relations are produced per statement, not stored where a client could
replace them.

Each attack runs over the wire (trust mode: agents by startup option; and with API keys
of two agents), and through MCP's SQL tools. Agent "alice" stores secrets; agent "bob"
and the attacks must find none of them, and nothing bob does changes what alice reads.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ServerProcess, start_server
from tests.rest.rest_support import KeySpec, keyed_server
from tests.security.ownership_support import mcp_call

SECRET = "alice-secret-kiwi"
SECRET_STATE = "alice-state-plan"
SECRET_STEP = "alice private reasoning"
INTERNAL = "hatidata_internal"


def wire(srv: ServerProcess, agent: str, key: str | None = None) -> psycopg.Connection:
    if key is not None:
        return psycopg.connect(
            host=srv.host, port=srv.port, user=agent, password=key, dbname="main", autocommit=True
        )
    return psycopg.connect(
        host=srv.host,
        port=srv.port,
        user="tester",
        dbname="main",
        autocommit=True,
        options=f"-c hatidata_agent_id={agent}",
    )


def store_secrets(conn: psycopg.Connection) -> None:
    conn.execute(f"SELECT * FROM store_memory('{SECRET} lives here')")
    conn.execute(f"SELECT * FROM set_agent_state('plan', '\"{SECRET_STATE}\"')")
    conn.execute(f"SELECT * FROM log_reasoning_step('s-alice', '{SECRET_STEP}')")


def attempt(conn: psycopg.Connection, sql: str) -> str:
    """What a statement gives back, rows or error text, as one string to search."""
    try:
        cur = conn.execute(sql)
        return repr(cur.fetchall()) if cur.description else ""
    except psycopg.Error as exc:
        return f"{exc.sqlstate}: {exc}"


def leaked(text: str) -> bool:
    return any(s in text for s in (SECRET, SECRET_STATE, SECRET_STEP))


# Names of the old internal table built at run time, as an attacker would.
COMPUTED = [
    "SELECT * FROM query_table('hati' || 'data_internal.agent_memory')",
    "SELECT * FROM query('SELECT * FROM hati' || 'data_internal.agent_memory')",
    "SELECT * FROM query_table(printf('%s.%s', 'hatidata_internal', 'agent_memory'))",
    "SELECT * FROM query_table('hati' || chr(100) || 'ata_internal.agent_memory')",
    "SELECT * FROM query(E'SELECT * FROM hati\\x64ata_internal.agent_state')",
    "SELECT * FROM query_table(upper('hatidata_internal') || '.COT_TRACES')",
    "SELECT * FROM hatidata_internal.agent_memory",
    'SELECT * FROM "hatidata_internal"."agent_state"',
    "SELECT * FROM query_table('_hatidata_agent_memory')",
    "SELECT * FROM query_table('_hatidata_' || 'agent_state')",
    "SELECT * FROM _hatidata_embedding_cache",
    "SELECT * FROM query_table('_hatidata_embedding' || '_cache')",
    "SELECT database_name, schema_name, table_name FROM duckdb_tables()",
    "SELECT database_name, path FROM duckdb_databases()",
    "SELECT * FROM duckdb_schemas()",
]
# Statements that persist a way around, then use it.
PERSISTED = [
    [
        "CREATE OR REPLACE MACRO steal_m() AS TABLE "
        "SELECT * FROM query_table('hati' || 'data_internal.agent_memory')",
        "SELECT * FROM steal_m()",
    ],
    [
        "CREATE OR REPLACE VIEW steal_v AS "
        "SELECT * FROM query_table('hati' || 'data_internal.agent_memory')",
        "SELECT * FROM steal_v",
    ],
    [
        "PREPARE steal_p AS SELECT * FROM query_table($1)",
        "EXECUTE steal_p('hatidata_internal.agent_memory')",
    ],
    [
        "SET VARIABLE steal_n = 'hatidata_internal.agent_memory'",
        "SELECT * FROM query_table(getvariable('steal_n'))",
    ],  # fmt: skip
    [
        "ATTACH ':memory:' AS steal_copy",
        "COPY FROM DATABASE hatidata TO steal_copy",
        "SELECT * FROM steal_copy.hatidata_internal.agent_memory",
    ],
]


@pytest.fixture(scope="module")
def trust(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path_factory.mktemp("trust"), "--embedding-provider", "hash")
    with wire(srv, "alice") as conn:
        store_secrets(conn)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory):
    ks = keyed_server(
        tmp_path_factory.mktemp("keyed"),
        {"alice": KeySpec("agent", agent_id="alice"), "bob": KeySpec("agent", agent_id="bob")},
    )
    with wire(ks.server, "alice", ks.secrets["alice"]) as conn:
        store_secrets(conn)
    yield ks
    ks.server.stop()


def test_agent_file_is_beside_the_users_file(trust: ServerProcess) -> None:
    assert (trust.data_dir / "hatiproxy.agent.duckdb").exists()
    with wire(trust, "alice") as conn:
        # The owner reads her own rows through the per-statement relations, typed as before.
        cur = conn.execute("SELECT memory_id, content, metadata FROM _hatidata_agent_memory")
        assert [d.type_code for d in cur.description] == [2950, 25, 3802]  # uuid, text, jsonb
        assert SECRET in repr(cur.fetchall())
        assert SECRET_STATE in attempt(conn, "SELECT value FROM main._hatidata_agent_state")
        assert SECRET_STEP in attempt(conn, 'SELECT content FROM "_hatidata_cot_traces"')


@pytest.mark.parametrize("sql", COMPUTED)
def test_computed_names_find_nothing_in_trust_mode(trust: ServerProcess, sql: str) -> None:
    with wire(trust, "bob") as conn:
        got = attempt(conn, sql)
    assert not leaked(got), got
    assert INTERNAL not in got.split(":", 1)[-1] or "does not exist" in got, got


@pytest.mark.parametrize("steps", PERSISTED, ids=lambda s: s[0].split()[0:3][-1])
def test_persisted_objects_are_no_backdoor(trust: ServerProcess, steps: list[str]) -> None:
    with wire(trust, "bob") as conn:
        out = [attempt(conn, sql) for sql in steps]
    assert not any(leaked(o) for o in out), out
    # ... nor for another agent that later uses them.
    with wire(trust, "carol") as conn:
        later = attempt(conn, steps[-1])
    assert not leaked(later), later


def test_attaching_the_agent_file_fails(trust: ServerProcess) -> None:
    path = trust.data_dir / "hatiproxy.agent.duckdb"
    with wire(trust, "bob") as conn:
        got = attempt(conn, f"ATTACH '{path}' AS stolen (READ_ONLY)")
        assert "conflict" in got or got.startswith("42501"), got  # DuckDB: already open
        after = attempt(conn, "SELECT * FROM stolen.hatidata_internal.agent_memory")
    assert not leaked(after), after


def test_a_forged_or_dropped_relation_changes_nothing_for_others(trust: ServerProcess) -> None:
    with wire(trust, "bob") as conn:
        attempt(conn, "CREATE OR REPLACE VIEW _hatidata_agent_memory AS SELECT 'FORGED' AS content")
        attempt(conn, "CREATE OR REPLACE VIEW main._hatidata_agent_state AS SELECT 'FORGED' AS key")
        attempt(conn, "DROP VIEW _hatidata_cot_traces")
        attempt(conn, "DROP VIEW IF EXISTS main._hatidata_agent_inbox")
        # bob himself still reads his own (empty) rows, not the forgery.
        assert attempt(conn, "SELECT content FROM _hatidata_agent_memory") == "[]"
    with wire(trust, "alice") as conn:
        memories = attempt(conn, "SELECT content FROM _hatidata_agent_memory")
        assert SECRET in memories and "FORGED" not in memories
        assert "FORGED" not in attempt(conn, "SELECT key FROM _hatidata_agent_state")
        assert SECRET_STEP in attempt(conn, "SELECT content FROM _hatidata_cot_traces")
        assert attempt(conn, "SELECT count(*) FROM _hatidata_agent_inbox") == "[(0,)]"


def test_describe_of_an_agent_relation(trust: ServerProcess) -> None:
    """Extended protocol: Parse / Describe before Execute, as drivers prepare statements."""
    with wire(trust, "alice") as conn:
        cur = conn.cursor()
        cur.execute(
            "SELECT key, version FROM _hatidata_agent_state WHERE key = %s", ("plan",), prepare=True
        )
        assert cur.fetchall() == [("plan", 1)]
        assert [d.type_code for d in cur.description] == [25, 20]


def test_copy_out_of_an_agent_relation(trust: ServerProcess) -> None:
    """psql's \\copy (SELECT ... FROM _hatidata_x) TO ... reads the caller's rows too."""
    sql = "COPY (SELECT content FROM _hatidata_agent_memory) TO STDOUT"
    with wire(trust, "alice") as conn, conn.cursor() as cur, cur.copy(sql) as copy:
        data = b"".join(bytes(chunk) for chunk in copy)
    assert SECRET.encode() in data
    with wire(trust, "bob") as conn, conn.cursor() as cur, cur.copy(sql) as copy:
        assert b"".join(bytes(chunk) for chunk in copy) == b""


def test_dollar_quoted_and_literal_names_are_plain_text(trust: ServerProcess) -> None:
    """Issue 21's small defects: $$ constants are constants; literals are never names."""
    with wire(trust, "dana") as conn:
        conn.execute("SELECT * FROM store_memory($$dollar quoted 'memory'$$)")
        conn.execute("SELECT * FROM store_memory('mentions hatidata_internal.agent_memory')")
        got = attempt(conn, "SELECT content FROM _hatidata_agent_memory ORDER BY content")
    assert "dollar quoted 'memory'" in got and "mentions hatidata_internal.agent_memory" in got


@pytest.mark.parametrize("sql", COMPUTED[:8] + ["SELECT content FROM _hatidata_agent_memory"])
def test_agent_keys_find_nothing_of_another_agent(keyed, sql: str) -> None:
    with wire(keyed.server, "bob", keyed.secrets["bob"]) as conn:
        got = attempt(conn, sql)
    assert not leaked(got), got


def test_attach_by_an_agent_key_is_refused(keyed) -> None:
    path = keyed.server.data_dir / "hatiproxy.agent.duckdb"
    with wire(keyed.server, "bob", keyed.secrets["bob"]) as conn:
        got = attempt(conn, f"ATTACH '{path}' AS stolen")
    assert got.startswith("42501"), got


def mcp_sql(srv: ServerProcess, tool: str, sql: str, key: str | None, agent: str) -> str:
    return mcp_call(srv.mcp_url, tool, {"sql": sql}, key, agent).text


@pytest.mark.parametrize("tool", ["query", "read_query"])
def test_mcp_sql_tools_find_nothing_of_another_agent(trust: ServerProcess, keyed, tool) -> None:
    own = mcp_sql(trust, tool, "SELECT content FROM _hatidata_agent_memory", None, "alice")
    assert SECRET in own, own  # the relation works through MCP for its owner
    for sql in [*COMPUTED[:8], "SELECT content FROM _hatidata_agent_memory"]:
        got = mcp_sql(trust, tool, sql, None, "bob")
        assert not leaked(got), (sql, got)
        got = mcp_sql(keyed.server, tool, sql, keyed.secrets["bob"], "bob")
        assert not leaked(got), (sql, got)


# --- property: internal names built at run time in many ways find nothing -----------------

TARGETS = [f"{INTERNAL}.agent_memory", f"{INTERNAL}.agent_state", f"{INTERNAL}.cot_traces",
           "_hatidata_embedding_cache"]  # fmt: skip


def _piece(draw: Any, text: str) -> str:
    """One SQL string expression whose value is `text`."""
    how = draw(st.sampled_from(["plain", "chr", "upper", "escape", "replace", "concat"]))
    quoted = "'" + text.replace("'", "''") + "'"
    if how == "chr":
        return " || ".join(f"chr({ord(c)})" for c in text) if text else "''"
    if how == "upper":
        return f"lower({quoted.upper()})"
    if how == "escape":
        return "E'" + "".join(f"\\x{ord(c):02x}" for c in text) + "'"
    if how == "replace":
        return f"replace({quoted[:-1]}ZZ'', 'ZZ', '')" if text else "''"
    if how == "concat":
        return f"concat({quoted}, '')"
    return quoted


@st.composite
def built_names(draw: Any) -> str:
    target = draw(st.sampled_from(TARGETS))
    cuts = sorted(draw(st.sets(st.integers(1, len(target) - 1), max_size=3)))
    parts = [target[a:b] for a, b in zip([0, *cuts], [*cuts, len(target)], strict=True)]
    expr = " || ".join(_piece(draw, p) for p in parts)
    if draw(st.booleans()):
        expr = f"printf('%s', {expr})"
    wrap = draw(st.sampled_from(["query_table", "query", "macro"]))
    if wrap == "query":
        return f"SELECT * FROM query('SELECT * FROM ' || {expr})"
    if wrap == "macro":
        return f"CREATE OR REPLACE MACRO prop_m() AS TABLE SELECT * FROM query_table({expr})"
    return f"SELECT * FROM query_table({expr})"


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(sql=built_names())
def test_property_no_built_name_reaches_agent_data(trust: ServerProcess, sql: str) -> None:
    with wire(trust, "mallory") as conn:
        got = attempt(conn, sql)
        if sql.startswith("CREATE"):
            got += attempt(conn, "SELECT * FROM prop_m()")
    assert not leaked(got), (sql, got)
    with contextlib.suppress(Exception):
        json.dumps(got)  # the answer is plain text either way


def test_keys_live_in_the_agent_file(keyed) -> None:
    """The users' file holds no agent table (keys included) for any client to name."""
    import duckdb

    keyed.server.stop()
    con = duckdb.connect(str(Path(keyed.server.data_dir) / "hatiproxy.duckdb"), read_only=True)
    schemas = {r[0] for r in con.execute("SELECT schema_name FROM duckdb_schemas()").fetchall()}
    names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
    con.close()
    assert INTERNAL not in schemas
    assert "_hatidata_embedding_cache" not in names
