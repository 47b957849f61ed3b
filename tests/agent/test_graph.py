"""Knowledge graph (proxy/agent/graph.py): entities and typed relations per agent, each
relation with its inverse once, breadth-first traversal, over SQL, MCP and REST."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import requests

from tests.conftest import ServerProcess, start_server
from tests.mcp.mcp_support import HttpAgent


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("graph")
    s = start_server(tmp, "--embedding-provider", "hash")
    yield s
    s.stop()


def sql(srv: ServerProcess, query: str, agent: str = "kg-a") -> list[tuple]:
    with srv.agent_conn(agent) as conn:
        return conn.execute(query).fetchall()


def call(srv: ServerProcess, name: str, agent: str = "kg-a", **args: Any) -> requests.Response:
    return requests.post(
        f"{srv.rest_url}/v1/functions/{name}",
        json=args,
        headers={"X-HatiData-Agent-Id": agent},
        timeout=30,
    )


def add(srv: ServerProcess, eid: str, etype: str, rels: list[tuple[str, str]] = ()) -> int:
    body = call(
        srv,
        "kg_add",
        entity_id=eid,
        entity_type=etype,
        attributes={"name": eid.title()},
        relations=[{"type": t, "target": d} for t, d in rels],
    )
    assert body.status_code == 200, body.text
    return body.json()["rows"][0]["relations_added"]


def test_relations_get_their_inverse_once_and_a_cycle_is_walked_once(srv: ServerProcess) -> None:
    # A cycle: alice -works_on-> atlas -depends_on-> billing -owned_by-> alice.
    add(srv, "atlas", "project")
    add(srv, "billing", "project")
    assert add(srv, "alice", "person", [("works_on", "atlas")]) == 2  # with its inverse
    assert add(srv, "alice", "person", [("works_on", "atlas")]) == 0  # no duplicates
    add(srv, "atlas", "project", [("depends_on", "billing")])
    add(srv, "billing", "project", [("owned_by", "alice")])
    add(srv, "dave", "person", [("reviews", "billing")])

    rels = sql(srv, "SELECT source_id, relation, target_id FROM _hatidata_kg_relations")
    assert ("atlas", "inverse:works_on", "alice") in rels
    assert rels.count(("alice", "works_on", "atlas")) == 1
    assert len(rels) == 8  # four relations, each with its inverse

    walk = sql(srv, "SELECT entity_id, depth, via_entity, via_relation FROM kg_query('alice')")
    ids = [r[0] for r in walk]
    assert ids[0] == "alice" and walk[0][1:] == (0, None, None)
    assert sorted(ids) == sorted(set(ids))  # each entity once, though the graph cycles
    assert dict((r[0], r[1]) for r in walk) == {"alice": 0, "atlas": 1, "billing": 1, "dave": 2}
    # Discovery order: alice's relations in the order they were added.
    assert ids[1:3] == ["atlas", "billing"]
    assert [r[0] for r in sql(srv, "SELECT * FROM kg_query('alice', depth := 1)")] == ids[:3]


def test_the_graph_is_plain_sql_for_recursive_queries(srv: ServerProcess) -> None:
    for eid, rels in (("p1", []), ("p2", [("part_of", "p1")]), ("p3", [("part_of", "p2")])):
        add(srv, eid, "part", rels)
    rows = sql(
        srv,
        """WITH RECURSIVE up(id, n) AS (
               SELECT 'p3', 0
               UNION ALL
               SELECT r.target_id, up.n + 1 FROM _hatidata_kg_relations r
               JOIN up ON r.source_id = up.id AND r.relation = 'part_of')
           SELECT e.entity_id, e.attributes->>'name' FROM up
           JOIN _hatidata_kg_entities e ON e.entity_id = up.id ORDER BY up.n""",
    )
    assert rows == [("p3", "P3"), ("p2", "P2"), ("p1", "P1")]


def test_another_agent_sees_nothing_and_mcp_sees_the_same_graph(srv: ServerProcess) -> None:
    add(srv, "mx", "thing")
    add(srv, "my", "thing", [("near", "mx")])
    assert sql(srv, "SELECT count(*) FROM kg_query('my')", agent="kg-other") == [(0,)]
    assert sql(srv, "SELECT count(*) FROM _hatidata_kg_entities", agent="kg-other") == [(0,)]
    hits = HttpAgent(srv, "kg-a").data("kg_query", {"entity_id": "mx", "depth": 1})
    assert [h["entity_id"] for h in hits] == ["mx", "my"]
    assert hits[1]["via_relation"] == "inverse:near"


def test_delete_removes_relations_both_ways(srv: ServerProcess) -> None:
    add(srv, "d1", "x")
    add(srv, "d2", "x", [("links", "d1")])
    rows = call(srv, "kg_delete", entity_id="d1").json()["rows"]
    assert rows == [{"entity_id": "d1", "deleted": True, "relations_deleted": 2}]
    assert sql(srv, "SELECT entity_id FROM kg_query('d2')") == [("d2",)]


def test_bad_input_is_named(srv: ServerProcess) -> None:
    r = call(
        srv, "kg_add", entity_id="z", entity_type="x", relations=[{"type": "r", "target": "nope"}]
    )
    assert r.status_code == 422 and "nope" in r.json()["message"]
    assert sql(srv, "SELECT count(*) FROM _hatidata_kg_entities WHERE entity_id = 'z'") == [(0,)]
    r = call(srv, "kg_query", entity_id="z", depth=99)
    assert r.status_code == 422 and "depth" in r.json()["message"]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="depth"):
        sql(srv, "SELECT * FROM kg_query('z', depth := -1)")
    assert call(srv, "no_such_function").status_code == 404
    r = call(srv, "kg_add", entity_id="z", entity_type="x", colour="red")
    assert r.status_code == 422 and "colour" in r.json()["message"]


def test_rest_lists_every_function_with_its_schema(srv: ServerProcess) -> None:
    listed = requests.get(f"{srv.rest_url}/v1/functions", timeout=30).json()
    by_name = {f["name"]: f for f in listed}
    assert {"kg_add", "kg_query", "store_memory", "set_agent_state"} <= set(by_name)
    assert by_name["kg_query"]["parameters"]["required"] == ["entity_id"]
    assert by_name["kg_add"]["writes"] is True and by_name["kg_add"]["scope"] == "memory:write"
