"""Shared helpers of the branch tests (test_branch_query, test_branch_merge,
test_branch_constraints): SQL on main, branch_query, branch_create, a standard main.

Import as `from branch_support import ...` (pytest puts this folder on sys.path).
"""

from __future__ import annotations

from typing import Any

import duckdb
from agent_support import who

from proxy.agent.layer import AgentLayer


async def sql(layer: AgentLayer, text: str) -> list[tuple]:
    """Run SQL directly: on main (as the product's own tables would be written), or on
    the agent database when it names hatidata_internal (the branch metadata)."""

    def work(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        cur.execute(text)
        return cur.fetchall() if cur.description else []

    return await layer.branches.db.run(work)


async def rows(layer: AgentLayer, table: str, order: str = "1") -> list[tuple]:
    return await sql(layer, f"SELECT * FROM {table} ORDER BY {order}")


async def setup_main(layer: AgentLayer) -> None:
    await sql(
        layer,
        "CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner VARCHAR NOT NULL, "
        "balance DECIMAL(10,2) DEFAULT 0, CHECK (balance >= 0))",
    )
    await sql(layer, "INSERT INTO accounts VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'cy', 30)")
    await sql(layer, "CREATE TABLE events (kind VARCHAR, n INTEGER)")
    await sql(layer, "INSERT INTO events VALUES ('a', 1), ('b', 2), ('b', 2)")
    await sql(layer, "CREATE TABLE untouched (x INTEGER)")
    await sql(layer, "INSERT INTO untouched VALUES (1)")


async def bq(layer: AgentLayer, bid: str, text: str, agent: str = "agent-a") -> list[dict]:
    out = await layer.call("branch_query", who(agent), [bid, text])
    return [r["row"] for r in out]


async def create(layer: AgentLayer, agent: str = "agent-a", **kw: Any) -> dict:
    # Through the registry: AgentLayer.call's own `name` parameter would take name=...
    fn = layer.registry.get("branch_create")
    (row,) = await fn.call(layer, who(agent), [], {"name": "b", **kw})
    return row


def setup_divergence(layer: AgentLayer) -> Any:
    """Branch: update id 1, delete id 2, insert id 4, create table notes; events: delete one
    'b', insert ('c', 3), update 'a' -> 10. Main after branching: update id 3, insert id 5,
    insert event ('z', 9), untouched gets a row."""

    async def go() -> str:
        await setup_main(layer)
        bid = (await create(layer))["branch_id"]
        await bq(layer, bid, "UPDATE accounts SET owner = 'ANN' WHERE id = 1")
        await bq(layer, bid, "DELETE FROM accounts WHERE id = 2")
        await bq(layer, bid, "INSERT INTO accounts VALUES (4, 'dee', 40)")
        await bq(layer, bid, "DELETE FROM events WHERE kind = 'b'")
        await bq(layer, bid, "INSERT INTO events VALUES ('b', 2), ('c', 3)")
        await bq(layer, bid, "UPDATE events SET n = 10 WHERE kind = 'a'")
        await bq(layer, bid, "CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)")
        await bq(layer, bid, "INSERT INTO notes VALUES (1, 'hello'), (2, 'world')")
        await sql(layer, "UPDATE accounts SET balance = 33 WHERE id = 3")
        await sql(layer, "INSERT INTO accounts VALUES (5, 'eve', 50)")
        await sql(layer, "INSERT INTO events VALUES ('z', 9)")
        await sql(layer, "INSERT INTO untouched VALUES (7)")
        return bid

    return go()
