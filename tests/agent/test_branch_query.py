"""Branches: create, query with copy-on-write, isolation, refused statements, wire helper."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import duckdb
import pytest
from agent_support import open_layer, run, who
from branch_support import bq, create, rows, setup_main, sql

from proxy.agent.branches import service as _branches  # noqa: F401  (registers the branch functions)
from proxy.agent.branches.ddl import _retarget
from proxy.core.errors import AgentError
from proxy.core.registry import REGISTRY
from transpiler.agent_calls import agent_functions

BRANCH_FUNCTIONS = {
    "branch_create",
    "branch_query",
    "branch_merge",
    "branch_discard",
    "branch_list",
    "expire_branches",
}


def test_registered_names_match_the_transpiler() -> None:
    assert agent_functions() >= BRANCH_FUNCTIONS
    assert set(REGISTRY.functions) >= BRANCH_FUNCTIONS
    assert REGISTRY.get("branch_query").columns == (("row", "JSON"),)


def test_create_query_and_copy_on_write(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_main(layer)
            await sql(layer, "CREATE TABLE _hatidata_secret (x INTEGER)")
            b = await create(layer, description="try things", ttl_seconds=600)
            assert b["schema_name"] == "branch_" + b["branch_id"]
            assert b["table_count"] == 3  # _hatidata_* and hatidata_internal are not branched
            assert b["expires_at"] - b["created_at"] == dt.timedelta(seconds=600)
            bid = b["branch_id"]

            # Reads see main through the views; Postgres SQL is transpiled first.
            got = await bq(layer, bid, "SELECT id, owner::text AS o FROM accounts ORDER BY id")
            assert got == [{"id": 1, "o": "ann"}, {"id": 2, "o": "bob"}, {"id": 3, "o": "cy"}]
            # Until written, a branch table shows main's live rows.
            await sql(layer, "INSERT INTO untouched VALUES (2)")
            assert await bq(layer, bid, "SELECT count(*) AS n FROM untouched") == [{"n": 2}]

            # Writes copy the table into the branch first; main is unchanged.
            out = await bq(layer, bid, "UPDATE accounts SET balance = balance + 1 WHERE id = 1")
            assert out == [{"command": "UPDATE", "rows_affected": 1}]
            await bq(layer, bid, "DELETE FROM accounts WHERE id = 2")
            await bq(layer, bid, "INSERT INTO accounts (id, owner) VALUES (4, 'dee')")
            assert await rows(layer, "accounts") == [(1, "ann", 10), (2, "bob", 20), (3, "cy", 30)]
            got = await bq(layer, bid, "SELECT id, balance FROM accounts ORDER BY id")
            assert got == [
                {"id": 1, "balance": 11.0},
                {"id": 3, "balance": 30.0},
                {"id": 4, "balance": 0.0},
            ]

            # The copy kept main's constraints (primary key, CHECK, NOT NULL, DEFAULT).
            for bad, state in [
                ("INSERT INTO accounts VALUES (1, 'dup', 1)", "23505"),
                ("UPDATE accounts SET balance = -5 WHERE id = 1", "23514"),
                ("INSERT INTO accounts (id) VALUES (9)", "23502"),
            ]:
                with pytest.raises(AgentError) as err:
                    await bq(layer, bid, bad)
                assert err.value.sqlstate == state, bad
            # ON CONFLICT needs the primary key in the copy.
            await bq(
                layer,
                bid,
                "INSERT INTO accounts VALUES (3, 'cy', 33) "
                "ON CONFLICT (id) DO UPDATE SET balance = excluded.balance",
            )
            assert await bq(layer, bid, "SELECT balance FROM accounts WHERE id = 3") == [
                {"balance": 33.0}
            ]

            # A table created in the branch lands in the branch schema, not main.
            await bq(layer, bid, "CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)")
            await bq(layer, bid, "INSERT INTO notes VALUES (1, 'hello')")
            assert await sql(
                layer,
                "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'notes' "
                "AND schema_name = 'main'",
            ) == [(0,)]

            # RETURNING gives rows; several statements run in one transaction.
            out = await bq(layer, bid, "INSERT INTO events VALUES ('c', 3) RETURNING kind, n")
            assert out == [{"kind": "c", "n": 3}]
            out = await bq(
                layer, bid, "INSERT INTO events VALUES ('d', 4); SELECT count(*) AS n FROM events"
            )
            assert out == [{"n": 5}]
            # PostgreSQL division (the macros are called qualified: the branch's own
            # search_path has no catalog schema)
            out = await bq(layer, bid, "SELECT 7 / 2 AS q, count(*) / 2 AS h FROM events")
            assert out == [{"q": 3, "h": 2}]
            with pytest.raises(AgentError):
                await bq(
                    layer,
                    bid,
                    "INSERT INTO events VALUES ('e', 5); SELECT 1/0::int x, "
                    "no_such_column FROM events",
                )
            assert await bq(layer, bid, "SELECT count(*) AS n FROM events") == [{"n": 5}]
            assert await rows(layer, "events", "kind") == [("a", 1), ("b", 2), ("b", 2)]

            (listed,) = await layer.call("branch_list", who(), ["active"])
            copied = {c["table"] for c in listed["tables_copied"]}
            assert copied == {"accounts", "events"}
            assert listed["description"] == "try things"

            # The pooled cursors are left without the branch's search_path.
            paths = await asyncio.gather(
                *[sql(layer, "SELECT current_setting('search_path')") for _ in range(8)]
            )
            assert all(p == [("",)] for p in paths)

    run(main())


def test_isolation(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_main(layer)
            bid = (await create(layer))["branch_id"]
            mine = (await create(layer, "agent-b"))["branch_id"]
            for agent, org in [("agent-b", "local"), ("agent-a", "other-org")]:
                for name, args in [
                    ("branch_query", [bid, "SELECT 1"]),
                    ("branch_merge", [bid]),
                    ("branch_discard", [bid]),
                ]:
                    with pytest.raises(AgentError) as err:
                        await layer.call(name, who(agent, org), args)
                    assert err.value.code == "not_found"
            assert [b["branch_id"] for b in await layer.call("branch_list", who("agent-b"))] == [
                mine
            ]
            # A branch cannot read another branch or the agent layer's tables.
            for text in [
                f"SELECT * FROM branch_{mine}.accounts",
                "SELECT * FROM hatidata_internal.branches",
                "SELECT * FROM query('SELECT * FROM hatidata_internal.branches')",
            ]:
                with pytest.raises(AgentError) as err:
                    await bq(layer, bid, text)
                assert err.value.code == "not_found", text

    run(main())


def test_bad_input(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_main(layer)
            for ttl in (0, -5, True, "soon"):
                with pytest.raises(AgentError) as err:
                    await create(layer, ttl_seconds=ttl)
                assert err.value.code == "invalid_argument"
            bid = (await create(layer))["branch_id"]
            for bad_id in ["0" * 32, "nope", "x'; DROP TABLE accounts; --", "branch_" + "f" * 32]:
                with pytest.raises(AgentError) as err:
                    await bq(layer, bad_id, "SELECT 1")
                assert err.value.code == "not_found"
            with pytest.raises(AgentError) as err:
                await layer.call("branch_merge", who(), [bid, "theirs"])
            assert err.value.code == "invalid_argument"
            with pytest.raises(AgentError) as err:
                await layer.call("branch_list", who(), ["zombie"])
            assert err.value.code == "invalid_argument"
            cases = [
                ("SELECT * FROM no_such_table", "42P01"),
                ("SELECT no_such_col FROM accounts", "42703"),
                ("SELEC 1", "42601"),
                ("INSERT INTO main.accounts VALUES (9, 'x', 1)", "42501"),
                ("UPDATE untouched SET x = 1; DROP TABLE accounts", "0A000"),
                ("DROP TABLE accounts", "0A000"),
                ("ALTER TABLE accounts RENAME TO acc2", "0A000"),
                ("SET search_path = 'main'", "0A000"),
                ("BEGIN", "0A000"),
                ("CREATE TEMP TABLE t (x INT)", "0A000"),
                ("COPY accounts TO '/tmp/x.csv'", "0A000"),
                ("ATTACH ':memory:' AS other", "0A000"),
                ("SELECT * FROM branch_query('x', 'SELECT 1')", "0A000"),
                ("", "22023"),
            ]
            for text, state in cases:
                with pytest.raises(AgentError) as err:
                    await bq(layer, bid, text)
                assert err.value.sqlstate == state, (text, err.value.message)
            # None of that touched main or left a copy behind.
            assert len(await rows(layer, "accounts")) == 3
            assert await rows(layer, "untouched") == [(1,)]
            (listed,) = await layer.call("branch_list", who())
            assert listed["tables_copied"] == []
            # A table created in the branch may be dropped.
            await bq(layer, bid, "CREATE TABLE scratch (x INT)")
            await bq(layer, bid, "DROP TABLE scratch")

    run(main())


def test_prepare_write_sync_for_wire_sessions(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_main(layer)
            b = await create(layer)
            schema = b["schema_name"]

            def wire(cur: duckdb.DuckDBPyConnection) -> list[list[str]]:
                # What the wire layer does for a client with search_path = branch_x,main.
                cur.execute(f"SET search_path = '{schema},main'")
                done = []
                try:
                    for text in [
                        "SELECT * FROM accounts",
                        "DELETE FROM accounts WHERE id = 1",
                        "UPDATE accounts SET owner = 'B' WHERE id = 2",
                        "INSERT INTO events VALUES ('w', 1)",
                        "CREATE TABLE fresh AS SELECT 1 AS x",
                    ]:
                        done.append(layer.branches.prepare_write_sync(cur, schema, text))
                        cur.execute(text)
                    # Not a branch: nothing to do.
                    done.append(layer.branches.prepare_write_sync(cur, "main", "DELETE FROM t"))
                    with pytest.raises(AgentError):
                        layer.branches.prepare_write_sync(cur, schema, "DROP TABLE accounts")
                    with pytest.raises(AgentError):
                        layer.branches.prepare_write_sync(
                            cur, schema, "SELECT 1", who=who("agent-b")
                        )
                finally:
                    cur.execute("RESET search_path")
                return done

            done = await layer.users_db.run(wire)
            assert done == [[], ["accounts"], [], ["events"], [], []]
            assert len(await rows(layer, "accounts")) == 3  # main unchanged
            got = await bq(layer, b["branch_id"], "SELECT id, owner FROM accounts ORDER BY id")
            assert got == [{"id": 2, "owner": "B"}, {"id": 3, "owner": "cy"}]
            (listed,) = await layer.call("branch_list", who())
            assert {c["table"] for c in listed["tables_copied"]} == {"accounts", "events"}
            await layer.call("branch_discard", who(), [b["branch_id"]])
            with pytest.raises(AgentError) as err:
                await layer.users_db.run(
                    lambda cur: layer.branches.prepare_write_sync(cur, schema, "DELETE FROM x")
                )
            assert err.value.code == "conflict"

    run(main())


def test_retarget_ddl() -> None:
    assert _retarget("CREATE TABLE t(a INTEGER);", "s", "t") == 'CREATE TABLE "s"."t"(a INTEGER);'
    assert _retarget('CREATE TABLE "x.y"(a INT);', "s", "z") == 'CREATE TABLE "s"."z"(a INT);'
    assert _retarget('CREATE TABLE b."My T"(a INT);', "m", "My T") == (
        'CREATE TABLE "m"."My T"(a INT);'
    )
    assert _retarget("CREATE VIEW v AS SELECT 1", "s", "v") is None
