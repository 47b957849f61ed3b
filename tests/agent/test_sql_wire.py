"""The agent layer over the wire: table functions, identity per connection, isolation."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import asyncpg
import psycopg
import psycopg2
import pytest

from tests.conftest import ServerProcess, start_server


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_server(
        tmp_path_factory.mktemp("agent-wire"),
        "--database",
        ":memory:",
        "--embedding-provider",
        "hash",
    )
    yield server
    server.stop()


def test_state_round_trip_with_server_side_parameters(srv: ServerProcess) -> None:
    with srv.agent_conn("wire-a") as conn:
        row = conn.execute(
            "SELECT key, value, version FROM set_agent_state(%s, %s)", ("task", '{"step": 1}')
        ).fetchone()
        assert row == ("task", {"step": 1}, 1)  # JSON columns arrive as json: psycopg parses
        row = conn.execute("SELECT version FROM set_agent_state('task', '\"two\"')").fetchone()
        assert row == (2,)
        assert conn.execute("SELECT value, found FROM get_agent_state('task')").fetchone() == (
            "two",
            True,
        )


def test_results_compose_with_sql(srv: ServerProcess) -> None:
    with srv.agent_conn("wire-compose") as conn:
        for key in ("a1", "a2", "b1"):
            conn.execute("SELECT * FROM set_agent_state(%s, %s)", (key, json.dumps(key)))
        rows = conn.execute(
            "SELECT s.key FROM list_agent_state() s WHERE s.key LIKE 'a%' ORDER BY s.key DESC"
        ).fetchall()
        assert rows == [("a2",), ("a1",)]
        joined = conn.execute(
            "SELECT l.key, g.found FROM list_agent_state(prefix := 'b') l "
            "CROSS JOIN get_agent_state('a1') g"
        ).fetchall()
        assert joined == [("b1", True)]


def test_call_rows_inside_statements_with_their_own_parameters_and_ctes(
    srv: ServerProcess,
) -> None:
    """A few result rows go into the statement itself (inline_rows.with_rows): after the
    statement's own parameters, beside its own WITH, typed as declared, twice in one
    statement, and no rows at all."""
    with srv.agent_conn("wire-cte") as conn:
        conn.execute("SELECT * FROM set_agent_state('k1', '{\"n\": 1}')")
        row = conn.execute(
            "WITH w AS (SELECT %s::INT AS x) SELECT g.value, g.found, w.x, %s::TEXT AS y"
            " FROM get_agent_state(%s) g, w",
            (7, "why", "k1"),
        ).fetchone()
        assert row == ({"n": 1}, True, 7, "why")
        got = conn.execute(
            "SELECT a.key, b.found FROM get_agent_state('k1') a, get_agent_state('nope') b"
        ).fetchone()
        assert got == ("k1", False)
        none = conn.execute("SELECT count(*) FROM list_agent_state(prefix := 'zz')").fetchone()
        assert none == (0,)


def test_identity_isolates_agents_and_the_views_follow_it(srv: ServerProcess) -> None:
    with srv.agent_conn("iso-a") as a, srv.agent_conn("iso-b") as b:
        a.execute("SELECT * FROM set_agent_state('secret', '42')")
        assert b.execute("SELECT found FROM get_agent_state('secret')").fetchone() == (False,)
        assert a.execute("SELECT agent_id, key FROM _hatidata_agent_state").fetchall() == [
            ("iso-a", "secret")
        ]
        assert b.execute("SELECT count(*) FROM _hatidata_agent_state").fetchone() == (0,)


def test_identity_from_asyncpg_startup_parameter(srv: ServerProcess) -> None:
    async def go() -> None:
        conn = await asyncpg.connect(
            host=srv.host,
            port=srv.port,
            user="tester",
            database="main",
            server_settings={"hatidata_agent_id": "asyncpg-agent"},
        )
        try:
            # Parse with unknown parameter types: agent arguments type themselves.
            stmt = await conn.prepare("SELECT key, version FROM set_agent_state($1, $2)")
            assert [t.name for t in stmt.get_parameters()] == ["text", "text"]
            rows = await conn.fetch("SELECT key, version FROM set_agent_state($1, $2)", "k", "1")
            assert [tuple(r) for r in rows] == [("k", 1)]
            agent = await conn.fetchval("SELECT agent_id FROM _hatidata_agent_state")
            assert agent == "asyncpg-agent"
            # Remaining $n are renumbered for DuckDB and still typed from the query.
            rows = await conn.fetch(
                "SELECT key FROM list_agent_state(prefix := $1) WHERE version >= $2", "k", 1
            )
            assert [r["key"] for r in rows] == ["k"]
        finally:
            await conn.close()

    asyncio.run(go())


def test_describe_runs_nothing(srv: ServerProcess) -> None:
    async def go() -> None:
        conn = await asyncpg.connect(
            host=srv.host,
            port=srv.port,
            user="tester",
            server_settings={"hatidata_agent_id": "describe-agent"},
        )
        try:
            stmt = await conn.prepare("SELECT * FROM set_agent_state('x', '1')")
            assert [a.name for a in stmt.get_attributes()][:3] == ["key", "value", "version"]
            assert await conn.fetchval("SELECT found FROM get_agent_state('x')") is False
        finally:
            await conn.close()

    asyncio.run(go())


def test_psycopg2_like_hatidata_agent(srv: ServerProcess) -> None:
    conn = psycopg2.connect(
        host=srv.host,
        port=srv.port,
        user="agent",
        dbname="hatidata",
        options="-c hatidata_agent_id=p2-agent -c hatidata_framework=custom",
        application_name="hatidata-agent/custom",
    )
    conn.autocommit = True
    try:
        cur = conn.cursor()
        cur.execute(
            "SELECT trace_id, step_index FROM log_reasoning_step(%s, %s, step_type := %s)",
            ("sess-1", "looked at the orders table", "observation"),
        )
        first = cur.fetchone()
        cur.execute(
            "SELECT * FROM log_reasoning_step('sess-1', 'decided to refund', step_type := 'decision')"
        )
        cur.execute("SELECT * FROM verify_chain('sess-1')")
        cols = [d[0] for d in cur.description]
        verdict = dict(zip(cols, cur.fetchone(), strict=True))
        assert verdict["chain_valid"] is True
        assert first[1] == 0
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("sql", "sqlstate"),
    [
        # Agent data is in another database: the internal schema does not exist here.
        ("SELECT * FROM hatidata_internal.agent_state", "42P01"),
        ('SELECT * FROM "hatidata_internal"/**/.agent_state', "42P01"),
        ("SELECT * FROM get_agent_state()", "22023"),  # missing argument
        ("SELECT * FROM get_agent_state('k', no_such := 1)", "22023"),
        ("SELECT get_agent_state('k')", "0A000"),  # a table function used as a scalar
        ("SELECT * FROM get_agent_state(upper('k'))", "0A000"),  # arguments are constants
        ("SELECT * FROM set_agent_state('k', '{not json')", "22P02"),
        ("SELECT * FROM list_agent_state(limit := 'many')", "22023"),
    ],
)
def test_bad_calls_get_a_sqlstate_and_the_connection_survives(
    srv: ServerProcess, sql: str, sqlstate: str
) -> None:
    with srv.agent_conn("bad-input") as conn:
        with pytest.raises(psycopg.Error) as err:
            conn.execute(sql)
        assert err.value.sqlstate == sqlstate, err.value
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_identity_variables_no_longer_steer_anything(srv: ServerProcess) -> None:
    """The old views filtered on DuckDB variables; setting them now changes nothing."""
    with srv.agent_conn("var-owner") as conn:
        conn.execute("SELECT * FROM set_agent_state('secret', '42')")
    with srv.agent_conn("var-thief") as conn:
        conn.execute("SET VARIABLE hatidata_agent_id = 'var-owner'")
        assert conn.execute("SELECT key FROM _hatidata_agent_state").fetchall() == []
        assert conn.execute("SELECT found FROM get_agent_state('secret')").fetchone() == (False,)


def test_agent_writes_are_not_part_of_the_session_transaction(srv: ServerProcess) -> None:
    """Agent functions commit on their own (documented), like sequences in Postgres."""
    with srv.agent_conn("txn-agent") as conn:
        conn.execute("BEGIN")
        conn.execute("SELECT * FROM set_agent_state('t', '1')")
        conn.execute("ROLLBACK")
        assert conn.execute("SELECT found FROM get_agent_state('t')").fetchone() == (True,)


def test_branch_over_the_wire_copy_on_write_and_merge(srv: ServerProcess) -> None:
    """COMPAT: a session under `SET search_path = 'branch_x,main'` writes into the branch."""
    with srv.agent_conn("brancher") as conn:
        conn.execute("CREATE TABLE wire_accounts (id INT PRIMARY KEY, balance INT)")
        conn.execute("INSERT INTO wire_accounts VALUES (1, 10), (2, 20)")
        branch_id, schema = conn.execute(
            "SELECT branch_id, schema_name FROM branch_create('what-if')"
        ).fetchone()
        conn.execute(f"SET search_path = '{schema},main'")
        conn.execute("UPDATE wire_accounts SET balance = balance + 5 WHERE id = 1")
        assert conn.execute("SELECT balance FROM wire_accounts WHERE id = 1").fetchone() == (15,)
        conn.execute("RESET search_path")
        assert conn.execute("SELECT balance FROM wire_accounts WHERE id = 1").fetchone() == (10,)
        conn.execute("SELECT * FROM branch_merge(%s, strategy := 'branch_wins')", (branch_id,))
        rows = conn.execute("SELECT id, balance FROM wire_accounts ORDER BY id").fetchall()
        assert rows == [(1, 15), (2, 20)]
        # The merged branch is gone: a session pointing at it cannot write to main (DuckDB
        # already refuses the search_path; if it did not, the write would be refused).
        with pytest.raises(psycopg.Error):
            conn.execute(f"SET search_path = '{schema},main'")
            conn.execute("UPDATE wire_accounts SET balance = 0")
        conn.execute("RESET search_path")
        assert conn.execute("SELECT sum(balance) FROM wire_accounts").fetchone() == (35,)


def test_branches_and_triggers_by_name(srv: ServerProcess) -> None:
    """A branch or trigger is named by its id or by its name, in every function taking one."""
    with srv.agent_conn("namer") as conn, srv.agent_conn("other-namer") as other:
        conn.execute("CREATE TABLE named_accounts (id INT PRIMARY KEY, balance INT)")
        conn.execute("INSERT INTO named_accounts VALUES (1, 10)")
        (first,) = conn.execute("SELECT branch_id FROM branch_create('what-if')").fetchone()
        conn.execute(
            "SELECT * FROM branch_query('what-if', 'UPDATE named_accounts SET balance = 15')"
        )
        rows = conn.execute(
            "SELECT row FROM branch_query(%s, 'SELECT balance FROM named_accounts')", ("what-if",)
        ).fetchall()
        assert rows == [({"balance": 15},)]
        # Another agent's branch of that name does not exist for it.
        with pytest.raises(psycopg.Error) as err:
            other.execute("SELECT * FROM branch_query('what-if', 'SELECT 1')")
        assert err.value.sqlstate == "42704"
        assert conn.execute("SELECT branch_id, status FROM branch_merge('what-if')").fetchone() == (
            first,
            "merged",
        )
        # The name used again: the one active branch of that name is meant, not the merged one.
        (second,) = conn.execute("SELECT branch_id FROM branch_create('what-if')").fetchone()
        assert conn.execute("SELECT branch_id FROM branch_discard('what-if')").fetchone() == (
            second,
        )
        # Now none of them is active: which one is meant cannot be told.
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SELECT * FROM branch_query('what-if', 'SELECT 1')")
        assert err.value.sqlstate == "22023"
        assert first in str(err.value) and second in str(err.value)
        # Two active branches of one name: the same, and each still answers to its id.
        twins = [conn.execute("SELECT branch_id FROM branch_create('twin')").fetchone()[0]]
        twins.append(conn.execute("SELECT branch_id FROM branch_create('twin')").fetchone()[0])
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SELECT * FROM branch_discard('twin')")
        assert err.value.sqlstate == "22023" and all(t in str(err.value) for t in twins)
        for t in twins:
            assert conn.execute("SELECT status FROM branch_discard(%s)", (t,)).fetchone() == (
                "discarded",
            )
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SELECT * FROM branch_query('no-such-branch', 'SELECT 1')")
        assert err.value.sqlstate == "42704"

        # Triggers: every function taking a trigger_id takes its name too.
        (tid,) = conn.execute(
            "SELECT trigger_id FROM register_trigger('refunds', concept := 'refund request')"
        ).fetchone()
        row = conn.execute(
            "SELECT trigger_id::text, would_fire FROM test_trigger('refunds', content := 'refund request')"
        ).fetchone()
        assert row == (str(tid), True)
        row = conn.execute(
            "SELECT trigger_id::text, enabled FROM update_trigger('refunds', enabled := false)"
        ).fetchone()
        assert row == (str(tid), False)
        assert conn.execute("SELECT status FROM reembed_trigger('refunds')").fetchone() == (
            "reembedded",
        )
        assert conn.execute("SELECT count(*) FROM trigger_fires('refunds')").fetchone() == (0,)
        with pytest.raises(psycopg.Error) as err:
            other.execute("SELECT * FROM delete_trigger('refunds')")
        assert err.value.sqlstate == "42704"
        row = conn.execute(
            "SELECT trigger_id::text, deleted FROM delete_trigger('refunds')"
        ).fetchone()
        assert row == (str(tid), True)
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SELECT * FROM delete_trigger('refunds')")
        assert err.value.sqlstate == "42704"


def test_small_and_large_agent_results_alternate_on_one_connection(srv: ServerProcess) -> None:
    """A few result rows are shown to DuckDB as literals, many as Arrow
    (proxy/execution/inline_rows.py): values, NULLs and types are the same either way,
    and each statement sees its own call's rows, never the previous one's."""
    awkward = 'it\'s a \\back\\slash, "quotes", ünïcødé; -- not a comment'
    with srv.agent_conn("wire-inline") as conn:
        for i in range(20):
            value = json.dumps(f"{awkward} {i}")
            conn.execute("SELECT * FROM set_agent_state(%s, %s)", (f"k{i:02d}", value))
        for _ in range(2):  # small, large, small again: each replaces the last
            few = conn.execute(
                "SELECT key, value, version FROM list_agent_state(prefix := 'k0') ORDER BY key"
            ).fetchall()
            assert few == [(f"k0{i}", f"{awkward} {i}", 1) for i in range(10)]
            many = conn.execute(
                "SELECT key, value FROM list_agent_state(prefix := 'k') ORDER BY key"
            ).fetchall()
            assert many == [(f"k{i:02d}", f"{awkward} {i}") for i in range(20)]
            one = conn.execute(
                "SELECT org_id, key_id, superuser, pg_typeof(superuser)::TEXT FROM whoami()"
            ).fetchone()
            assert one[1] is None and one[2] in (True, False) and one[3] == "boolean"
            none = conn.execute("SELECT key FROM list_agent_state(prefix := 'zz')").fetchall()
            assert none == []
        row = conn.execute(
            "SELECT memory_id, pg_typeof(memory_id)::TEXT FROM store_memory(%s)", (awkward,)
        ).fetchone()
        again = conn.execute("SELECT memory_id FROM store_memory(%s)", (awkward,)).fetchone()
        assert again[0] == row[0]  # deduplicated: the same memory, not a stale row
