"""REST agent memory (seed 001 "Agent Memory API") against a live server with API keys."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.rest.rest_support import KeyedServer, standard_server

BASE = "/v1/organizations/local/agent-memory"
SEED_FIELDS = {
    "id",
    "org_id",
    "agent_id",
    "memory_type",
    "content",
    "created_at",
    "access_count",
    "embedding_provider",
    "has_embedding",
    "embedding_model",
    "embedding_dimensions",
    "embedding_status",
}


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    with standard_server(tmp_path_factory.mktemp("rest-memory")) as server:
        yield server


def store(ks: KeyedServer, key: str, agent: str, content: str, **extra) -> dict:
    body = {"agent_id": agent, "memory_type": "semantic", "content": content, **extra}
    r = ks.request("POST", BASE, key=key, json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_create_memory_has_the_seed_shape(ks: KeyedServer) -> None:
    m = store(ks, "admin", "research-agent", "User prefers PostgreSQL with Drizzle ORM", wait=True)
    assert set(m) >= SEED_FIELDS
    uuid.UUID(m["id"])
    assert m["org_id"] == "local" and m["agent_id"] == "research-agent"
    assert m["memory_type"] == "semantic" and m["access_count"] == 0
    assert m["embedding_status"] == "embedded" and m["has_embedding"] is True
    assert m["embedding_model"] == "hash-384" and m["embedding_dimensions"] == 384
    assert m["embedding_provider"] == "local" and m["deduplicated"] is False
    # The same content again is the same memory.
    again = store(ks, "admin", "research-agent", "User prefers PostgreSQL with Drizzle ORM")
    assert again["id"] == m["id"] and again["deduplicated"] is True


def test_create_memory_without_wait_is_pending_or_embedded(ks: KeyedServer) -> None:
    m = store(ks, "bot", "bot", "bot remembers the staging database is read-only")
    assert m["embedding_status"] in ("pending", "embedded")
    assert m["has_embedding"] is (m["embedding_status"] == "embedded")
    assert m["importance"] == 0.5 and m["metadata"] == {}


def test_create_memory_extras_and_validation(ks: KeyedServer) -> None:
    m = store(ks, "admin", "x-agent", "with extras", metadata={"k": 1}, importance=0.9,
              session_id="s1")  # fmt: skip
    assert (m["metadata"], m["importance"], m["session_id"]) == ({"k": 1}, 0.9, "s1")
    bad = [
        {"agent_id": "a", "memory_type": "semantic"},  # no content
        {"agent_id": "a", "memory_type": "semantic", "content": ""},
        {"memory_type": "semantic", "content": "x"},  # no agent_id
        {"agent_id": "a", "memory_type": "semantic", "content": "x", "importance": 2},
        {"agent_id": "a", "memory_type": "t" * 101, "content": "x"},
    ]
    for body in bad:
        r = ks.request("POST", BASE, key="admin", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"] == "invalid_request"


def test_auth_scopes_and_agent_binding(ks: KeyedServer) -> None:
    body = {"agent_id": "bot", "memory_type": "semantic", "content": "auth check"}
    assert ks.request("POST", BASE, json=body).status_code == 401
    r = ks.request("GET", BASE, headers={"Authorization": "ApiKey hd_live_nope"})
    assert r.status_code == 401 and r.json()["error"] == "unauthorized"
    r = ks.request("POST", BASE, key="analyst", json=body)
    assert r.status_code == 403 and r.json()["error"] == "forbidden"
    r = ks.request("POST", BASE, key="bot2", json=body)  # an agent key storing for another
    assert r.status_code == 403
    assert ks.request("GET", BASE, key="analyst").status_code == 200
    assert ks.request("GET", BASE, key="auditor").status_code == 200


def test_other_organisation_is_not_found(ks: KeyedServer) -> None:
    body = {"agent_id": "bot", "memory_type": "semantic", "content": "org check"}
    for key, org in (("admin", "org2"), ("other", "local")):
        path = f"/v1/organizations/{org}/agent-memory"
        assert ks.request("POST", path, key=key, json=body).status_code == 404
        assert ks.request("GET", path, key=key).status_code == 404
        assert ks.request("GET", path + "/embedding-stats", key=key).status_code == 404
    # org2's own view holds none of local's memories.
    assert ks.request("GET", "/v1/organizations/org2/agent-memory", key="other").json() == []


def test_list_scopes_filters_and_limit(ks: KeyedServer) -> None:
    a = store(ks, "bot", "bot", "list: bot fact", wait=True)
    b = store(ks, "bot2", "bot2", "list: bot2 fact")
    ids = {m["id"] for m in ks.request("GET", BASE, key="admin", params={"limit": 100}).json()}
    assert {a["id"], b["id"]} <= ids  # an org key sees every agent
    own = ks.request("GET", BASE, key="bot").json()
    assert own and {m["agent_id"] for m in own} == {"bot"}
    assert b["id"] not in {m["id"] for m in own}
    assert ks.request("GET", BASE, key="bot", params={"agent_id": "bot2"}).status_code == 403
    only = ks.request("GET", BASE, key="admin", params={"agent_id": "bot2"}).json()
    assert {m["agent_id"] for m in only} == {"bot2"}
    seed_list = ks.request("GET", BASE, key="admin", params={"agent_id": "bot", "limit": 1}).json()
    assert len(seed_list) == 1 and set(seed_list[0]) >= SEED_FIELDS
    embedded = ks.request(
        "GET", BASE, key="admin", params={"embedding_status": "embedded", "limit": 100}
    ).json()
    assert a["id"] in {m["id"] for m in embedded}
    assert all(m["embedding_status"] == "embedded" for m in embedded)
    by_model = ks.request("GET", BASE, key="admin", params={"embedding_model": "hash-384"}).json()
    assert by_model and all(m["embedding_model"] == "hash-384" for m in by_model)
    assert ks.request("GET", BASE, key="admin", params={"embedding_model": "nope"}).json() == []
    typed = ks.request("GET", BASE, key="admin", params={"memory_type": "episodic"}).json()
    assert typed == []
    for params in ({"limit": 0}, {"embedding_status": "bogus"}, {"limit": "x"}):
        assert ks.request("GET", BASE, key="admin", params=params).status_code == 422


def test_list_limit_is_capped_at_100(ks: KeyedServer) -> None:
    for i in range(102):
        store(ks, "admin", "bulk-agent", f"bulk memory number {i}")
    r = ks.request("GET", BASE, key="admin", params={"agent_id": "bulk-agent", "limit": 500})
    assert r.status_code == 200 and len(r.json()) == 100
    newest = r.json()[0]["content"]
    assert newest == "bulk memory number 101"


def test_search_finds_the_embedded_memory(ks: KeyedServer) -> None:
    m = store(ks, "bot", "bot", "User prefers Drizzle ORM over Prisma", wait=True)
    store(ks, "bot", "bot", "SQLite for local development", wait=True)
    r = ks.request(
        "GET", BASE + "/search", key="admin",
        params={"query": "User prefers Drizzle ORM over Prisma", "agent_id": "bot", "top_k": 5},
    )  # fmt: skip
    assert r.status_code == 200, r.text
    hits = r.json()
    assert hits[0]["entry"]["id"] == m["id"]
    assert hits[0]["score_kind"] == "hybrid" and hits[0]["similarity_score"] > 0.99
    assert set(hits[0]["entry"]) >= SEED_FIELDS
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    assert hits[0]["score"] == 1.0  # first by the weighted score and by BM25
    assert all(0 <= h["weighted_score"] <= 1 for h in hits)
    assert hits[0]["weighted_score"] == max(h["weighted_score"] for h in hits)
    assert len(hits) <= 5


def test_search_keyword_fallback_right_after_store(ks: KeyedServer) -> None:
    m = store(ks, "bot2", "bot2", "zanzibar quokka retrospective notes")
    hits = ks.request("GET", BASE + "/search", key="bot2", params={"query": "quokka"}).json()
    hit = next(h for h in hits if h["entry"]["id"] == m["id"])
    if hit["entry"]["embedding_status"] != "embedded":
        assert hit["score_kind"] == "keyword"  # not embedded yet: found by its words
    else:
        assert hit["score_kind"] == "hybrid"


def test_search_across_the_org_and_agent_isolation(ks: KeyedServer) -> None:
    a = store(ks, "bot", "bot", "pelican migration observed", wait=True)
    b = store(ks, "bot2", "bot2", "pelican feeding observed", wait=True)
    hits = ks.request("GET", BASE + "/search", key="admin", params={"query": "pelican"}).json()
    found = {h["entry"]["id"]: h["entry"]["agent_id"] for h in hits}
    assert found.get(a["id"]) == "bot" and found.get(b["id"]) == "bot2"
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    own = ks.request("GET", BASE + "/search", key="bot", params={"query": "pelican"}).json()
    assert {h["entry"]["agent_id"] for h in own} == {"bot"}
    r = ks.request("GET", BASE + "/search", key="bot", params={"query": "x", "agent_id": "bot2"})
    assert r.status_code == 403
    other = ks.request(
        "GET",
        "/v1/organizations/org2/agent-memory/search",
        key="other",
        params={"query": "pelican"},
    )
    assert other.status_code == 200 and other.json() == []


def test_search_validation(ks: KeyedServer) -> None:
    for params in ({}, {"query": ""}, {"query": "x", "top_k": 51}, {"query": "x", "top_k": 0}):
        r = ks.request("GET", BASE + "/search", key="admin", params=params)
        assert r.status_code == 422, params
    r = ks.request("GET", BASE + "/search", key="admin", params={"query": "x", "top_k": 50})
    assert r.status_code == 200


def test_delete_memory(ks: KeyedServer) -> None:
    m = store(ks, "bot", "bot", "to be deleted by the org admin")
    r = ks.request("DELETE", f"{BASE}/{m['id']}", key="admin")
    assert r.status_code == 200 and r.json() == {"memory_id": m["id"], "status": "deleted"}
    assert ks.request("DELETE", f"{BASE}/{m['id']}", key="admin").status_code == 404
    other = store(ks, "bot2", "bot2", "bot2 keeps this")
    assert ks.request("DELETE", f"{BASE}/{other['id']}", key="bot").status_code == 404
    path = f"/v1/organizations/org2/agent-memory/{other['id']}"
    assert ks.request("DELETE", path, key="other").status_code == 404
    assert ks.request("DELETE", f"{BASE}/{other['id']}", key="analyst").status_code == 403
    r = ks.request("DELETE", f"{BASE}/not-a-uuid", key="admin")
    assert r.status_code == 404 and r.json()["error"] == "not_found"  # ids in paths are UUIDs
    for fixed in ("search", "embedding-stats"):  # not a memory id: the path's methods
        r = ks.request("DELETE", f"{BASE}/{fixed}", key="admin")
        assert r.status_code == 405 and r.json()["error"] == "method_not_allowed", r.text
        assert r.headers["Allow"] == "GET"
    r = ks.request("DELETE", f"{BASE}/bulk-re-embed", key="admin")
    assert r.status_code == 405 and r.headers["Allow"] == "POST"
    r = ks.request("POST", f"{BASE}/{other['id'].upper()}/re-embed", key="bot")
    assert r.status_code == 404  # upper-case UUIDs are ids too (another agent's: not found)
    own = ks.request("DELETE", f"{BASE}/{other['id']}", key="bot2")
    assert own.status_code == 200 and own.json()["status"] == "deleted"


def test_embedding_stats(ks: KeyedServer) -> None:
    store(ks, "bot", "bot", "stats: embedded memory", wait=True)
    org = ks.request("GET", BASE + "/embedding-stats", key="admin").json()
    assert set(org) >= {"models", "total_embedded", "total_pending", "total_failed",
                        "migration_in_progress"}  # fmt: skip
    assert org["models"][0]["model"] == "hash-384" and org["models"][0]["dimensions"] == 384
    assert org["total_embedded"] >= org["models"][0]["count"] >= 1
    assert org["migration_in_progress"] is False
    mine = ks.request("GET", BASE + "/embedding-stats", key="bot").json()
    assert 0 < mine["total"] < org["total"]
    assert mine["total"] == mine["total_embedded"] + mine["total_pending"] + mine["total_failed"]
    empty = ks.request("GET", "/v1/organizations/org2/agent-memory/embedding-stats", key="other")
    assert empty.json()["total"] == 0 and empty.json()["models"] == []


def test_reembed_one_and_bulk(ks: KeyedServer) -> None:
    own = store(ks, "bot", "bot", "re-embed me", wait=True)
    foreign = store(ks, "bot2", "bot2", "not yours to re-embed", wait=True)
    r = ks.request("POST", f"{BASE}/{own['id']}/re-embed", key="bot")
    assert r.status_code == 200 and r.json() == {"memory_id": own["id"], "status": "queued"}
    assert ks.request("POST", f"{BASE}/{foreign['id']}/re-embed", key="bot").status_code == 404
    assert ks.request("POST", f"{BASE}/{foreign['id']}/re-embed", key="analyst").status_code == 403
    assert ks.request("POST", f"{BASE}/{uuid.uuid4()}/re-embed", key="admin").status_code == 404
    ids = [own["id"], foreign["id"], str(uuid.uuid4()), own["id"]]
    r = ks.request("POST", BASE + "/bulk-re-embed", key="bot", json={"memory_ids": ids})
    assert r.status_code == 200 and r.json() == {"queued": 1, "skipped": 2}
    r = ks.request("POST", BASE + "/bulk-re-embed", key="admin", json={"memory_ids": ids})
    assert r.json() == {"queued": 2, "skipped": 1}
    path = "/v1/organizations/org2/agent-memory/bulk-re-embed"
    assert ks.request("POST", path, key="other", json={"memory_ids": ids}).json() == {
        "queued": 0,
        "skipped": 3,
    }
    for body in ({"memory_ids": ["nope"]}, {}, {"memory_ids": "x"}):
        assert (
            ks.request("POST", BASE + "/bulk-re-embed", key="admin", json=body).status_code == 422
        )
    # Queued work completes: the memory is embedded again.
    deadline = time.time() + 15
    while time.time() < deadline:
        rows = ks.request("GET", BASE, key="bot", params={"limit": 100}).json()
        if next(m for m in rows if m["id"] == own["id"])["embedding_status"] == "embedded":
            break
        time.sleep(0.1)
    else:
        pytest.fail("re-embedded memory never became 'embedded' again")


def test_rest_writes_are_visible_over_sql(ks: KeyedServer) -> None:
    m = store(ks, "admin", "bot", "written over REST, read over the wire")
    with psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user="bot", password=ks.secrets["bot"],
        dbname="hatidata", autocommit=True,
    ) as conn:  # fmt: skip
        rows = conn.execute("SELECT memory_id::VARCHAR, agent_id FROM list_memories()").fetchall()
    assert (m["id"], "bot") in rows
    assert {agent for _, agent in rows} == {"bot"}


def test_public_client_round_trip(ks: KeyedServer) -> None:
    from hatidata_agent.control_plane import ControlPlaneClient

    cp = ControlPlaneClient(base_url=ks.url, api_key=ks.secrets["admin"], org_id="local")
    m = cp.create_memory(agent_id="client-agent", content="client stores a walrus fact")
    assert m["agent_id"] == "client-agent" and m["memory_type"] == "observation"
    listed = cp.list_memories(agent_id="client-agent", memory_type="observation", limit=10)
    assert [x["id"] for x in listed] == [m["id"]]
    hits = cp.search_memory(query="walrus", agent_id="client-agent", top_k=3)
    assert hits[0]["entry"]["id"] == m["id"] and isinstance(hits[0]["score"], float)
    assert cp.embedding_stats()["total"] >= 1
    assert cp.delete_memory(m["id"]) == {"memory_id": m["id"], "status": "deleted"}


def test_process_memories_is_scoped_by_the_key(ks: KeyedServer) -> None:
    """process_memories (corrections) needs memory:write and acts as the key's agent."""
    url = "/v1/functions/process_memories"
    r = ks.request("POST", url, key="analyst", json={"messages": "I live in Paris."})
    assert r.status_code == 403, r.text
    first = ks.request("POST", url, key="bot", json={"messages": "I live in Paris."})
    assert first.status_code == 200 and first.json()["rows"][0]["event"] == "ADD"
    fix = ks.request("POST", url, key="bot", json={"messages": "I moved to Berlin."})
    row = fix.json()["rows"][0]
    assert row["event"] == "UPDATE" and row["superseded_id"] == first.json()["rows"][0]["memory_id"]
    # The same turn for another org's agent is new there: nothing of bot's is touched.
    other = ks.request("POST", url, key="other", json={"messages": "I moved to Berlin."})
    assert other.status_code == 200 and other.json()["rows"][0]["event"] == "ADD"
    got = ks.request(
        "POST", "/v1/functions/get_memory", key="bot", json={"memory_id": row["memory_id"]}
    )
    assert got.json()["rows"][0]["conflict_status"] == "none"
