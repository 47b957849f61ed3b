"""Branches: merge (both strategies, all or nothing), discard, TTL expiry, restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import duckdb
import pytest
from agent_support import open_layer, run, who
from branch_support import bq, create, rows, setup_divergence, setup_main, sql

from proxy.core.errors import AgentError


def test_merge_branch_wins(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            bid = await setup_divergence(layer)
            (out,) = await layer.call("branch_merge", who(), [bid], strategy="branch_wins")
            assert out["status"] == "merged" and out["strategy"] == "branch_wins"
            actions = {t["table"]: t["action"] for t in out["tables"]}
            assert actions == {"accounts": "replaced", "events": "replaced", "notes": "created"}
            # Exactly the branch's rows: main's later changes to touched tables are lost.
            assert await rows(layer, "accounts") == [(1, "ANN", 10), (3, "cy", 30), (4, "dee", 40)]
            assert await rows(layer, "events", "kind") == [("a", 10), ("b", 2), ("c", 3)]
            assert await rows(layer, "notes") == [(1, "hello"), (2, "world")]
            # Untouched tables keep main's current rows.
            assert await rows(layer, "untouched") == [(1,), (7,)]
            # main's table keeps its constraints; the created table got the branch's DDL.
            with pytest.raises(duckdb.ConstraintException):
                await sql(layer, "INSERT INTO accounts VALUES (1, 'x', 1)")
            with pytest.raises(duckdb.ConstraintException):
                await sql(layer, "INSERT INTO notes VALUES (1, 'again')")
            # The branch is gone and can no longer be used.
            assert await sql(
                layer, f"SELECT count(*) FROM duckdb_schemas() WHERE schema_name = 'branch_{bid}'"
            ) == [(0,)]
            for name, args in [
                ("branch_query", [bid, "SELECT 1"]),
                ("branch_merge", [bid]),
                ("branch_discard", [bid]),
            ]:
                with pytest.raises(AgentError) as err:
                    await layer.call(name, who(), args)
                assert err.value.code == "conflict" and "merged" in err.value.message
            (listed,) = await layer.call("branch_list", who(), status="merged")
            assert listed["branch_id"] == bid and listed["merged_at"] is not None

    run(main())


def test_merge_main_wins(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            bid = await setup_divergence(layer)
            (out,) = await layer.call("branch_merge", who(), [bid], strategy="main_wins")
            report = {t["table"]: t for t in out["tables"]}
            assert report["accounts"]["rows_inserted"] == 1
            # PK table: only id 4 (not in main) arrives; the branch's update of 1 and delete
            # of 2 are ignored; main's own later changes (3, 5) stay.
            assert await rows(layer, "accounts") == [
                (1, "ann", 10),
                (2, "bob", 20),
                (3, "cy", 33),
                (4, "dee", 40),
                (5, "eve", 50),
            ]
            # No-PK table: distinct branch rows not in main are added, nothing is removed:
            # ('a', 10) (the updated row) and ('c', 3) arrive; ('b', 2) is already there.
            assert await rows(layer, "events", "kind, n") == [
                ("a", 1),
                ("a", 10),
                ("b", 2),
                ("b", 2),
                ("c", 3),
                ("z", 9),
            ]
            assert await rows(layer, "notes") == [(1, "hello"), (2, "world")]
            assert await rows(layer, "untouched") == [(1,), (7,)]

    run(main())


def test_merge_is_all_or_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await sql(layer, "CREATE TABLE u (id INT PRIMARY KEY, email TEXT UNIQUE)")
            await sql(layer, "INSERT INTO u VALUES (1, 'a@x')")
            await sql(layer, "CREATE TABLE v (x INT)")
            bid = (await create(layer))["branch_id"]
            await bq(layer, bid, "INSERT INTO v VALUES (1)")
            await bq(layer, bid, "INSERT INTO u VALUES (2, 'b@x')")
            await sql(layer, "INSERT INTO u VALUES (3, 'b@x')")  # main takes the email
            with pytest.raises(AgentError) as err:
                await layer.call("branch_merge", who(), [bid, "main_wins"])
            assert err.value.sqlstate == "23505"
            assert await rows(layer, "v") == []  # nothing merged
            (listed,) = await layer.call("branch_list", who())
            assert listed["status"] == "active"
            await bq(layer, bid, "DELETE FROM u WHERE id = 2")  # still usable; fix and retry
            await layer.call("branch_merge", who(), [bid, "main_wins"])
            assert await rows(layer, "v") == [(1,)]
            assert await rows(layer, "u") == [(1, "a@x"), (3, "b@x")]

    run(main())


def test_discard(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_main(layer)
            bid = (await create(layer))["branch_id"]
            await bq(layer, bid, "DELETE FROM accounts")
            (out,) = await layer.call("branch_discard", who(), ["branch_" + bid])
            assert out["status"] == "discarded"
            assert len(await rows(layer, "accounts")) == 3
            assert await sql(
                layer, f"SELECT count(*) FROM duckdb_schemas() WHERE schema_name = 'branch_{bid}'"
            ) == [(0,)]
            with pytest.raises(AgentError) as err:
                await bq(layer, bid, "SELECT 1")
            assert err.value.code == "conflict" and "discarded" in err.value.message
            assert await layer.call("branch_list", who(), ["active"]) == []
            assert [b["status"] for b in await layer.call("branch_list", who())] == ["discarded"]

    run(main())


def test_ttl_expiry(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_main(layer)
            short = (await create(layer, ttl_seconds=1))["branch_id"]
            long = (await create(layer, ttl_seconds=3600))["branch_id"]
            other = (await create(layer, "agent-b", ttl_seconds=1))["branch_id"]
            await asyncio.sleep(1.2)
            out = await layer.call("expire_branches", who())
            assert [r["branch_id"] for r in out] == [short]  # only the caller's
            with pytest.raises(AgentError) as err:
                await bq(layer, short, "SELECT 1")
            assert "expired" in err.value.message
            # Using an overdue branch expires it on the spot.
            with pytest.raises(AgentError) as err:
                await bq(layer, other, "SELECT 1", agent="agent-b")
            assert "expired" in err.value.message
            statuses = {b["branch_id"]: b["status"] for b in await layer.call("branch_list", who())}
            assert statuses == {short: "expired", long: "active"}
            # The background sweep expires everybody's.
            b3 = (await create(layer, "agent-c", ttl_seconds=1))["branch_id"]
            await asyncio.sleep(1.1)
            assert await layer.branches.expire_all() == 1
            (listed,) = await layer.call("branch_list", who("agent-c"))
            assert listed["branch_id"] == b3 and listed["status"] == "expired"
            assert await sql(
                layer, "SELECT schema_name FROM duckdb_schemas() WHERE schema_name LIKE 'branch_%'"
            ) == [(f"branch_{long}",)]

    run(main())


def test_background_expiry_task(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            layer.branches.expiry_interval = 0.2
            await layer.branches.stop()
            await layer.branches.start()
            bid = (await create(layer, ttl_seconds=0.3))["branch_id"]
            await asyncio.sleep(1.0)

            def status(cur: duckdb.DuckDBPyConnection) -> str:
                return cur.execute(
                    "SELECT status FROM hatidata_internal.branches WHERE branch_id = ?", [bid]
                ).fetchone()[0]

            assert await layer.db.run(status) == "expired"

    run(main())


def test_file_database_survives_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "branches.duckdb")

    async def first() -> str:
        async with open_layer(tmp_path, database=db) as layer:
            await setup_main(layer)
            bid = (await create(layer))["branch_id"]
            await bq(layer, bid, "DELETE FROM accounts WHERE id = 3")
            await bq(layer, bid, "ALTER TABLE events ADD COLUMN extra INT")
            await bq(layer, bid, "INSERT INTO events VALUES ('new', 7, 1)")
            return bid

    async def second(bid: str) -> None:
        async with open_layer(tmp_path, database=db) as layer:
            got = await bq(layer, bid, "SELECT id FROM accounts ORDER BY id")
            assert got == [{"id": 1}, {"id": 2}]
            await layer.call("branch_merge", who(), [bid, "branch_wins"])
            assert [r[0] for r in await rows(layer, "accounts")] == [1, 2]
            # Schema changes are not merged: only the columns main has are written.
            assert await rows(layer, "events", "kind, n") == [
                ("a", 1),
                ("b", 2),
                ("b", 2),
                ("new", 7),
            ]

    run(second(run(first())))
