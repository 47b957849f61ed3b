"""REST semantic triggers (seed 001 "Semantic Triggers API") against a live server."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.rest.rest_support import KeyedServer, standard_server

BASE = "/v1/organizations/local/triggers"
HOOK = "http://127.0.0.1:9/hook"  # never contacted by these tests' fires
SEED_FIELDS = {
    "id",
    "org_id",
    "name",
    "concept",
    "threshold",
    "actions",
    "cooldown_secs",
    "enabled",
    "fire_count",
    "created_at",
    "embedding_model",
    "event_source",
    "embedding_dimensions",
}
FIRE_FIELDS = {"id", "trigger_id", "org_id", "similarity", "input_text", "action_taken", "fired_at"}


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    with standard_server(tmp_path_factory.mktemp("rest-triggers")) as server:
        yield server


def create(ks: KeyedServer, key: str = "admin", **body) -> dict:
    payload = {"threshold": 0.82, "actions": ["flag_for_review"], **body}
    r = ks.request("POST", BASE, key=key, json=payload)
    assert r.status_code == 200, r.text
    return r.json()


def test_create_has_the_seed_shape(ks: KeyedServer) -> None:
    t = create(
        ks,
        name="pii-detection",
        concept="queries accessing personally identifiable information",
        actions=["flag_for_review", "webhook"],
        cooldown_secs=60,
        webhook_url=HOOK,
    )
    assert set(t) >= SEED_FIELDS
    uuid.UUID(t["id"])
    assert (t["org_id"], t["name"], t["threshold"]) == ("local", "pii-detection", 0.82)
    assert t["actions"] == ["flag_for_review", "webhook"] and t["cooldown_secs"] == 60
    assert t["enabled"] is True and t["fire_count"] == 0 and t["event_source"] == "semantic"
    assert t["embedding_model"] == "hash-384" and t["embedding_dimensions"] == 384
    assert t["scope"] == "org" and t["action_config"]["url"] == HOOK
    d = create(ks, name="defaults", concept="anything at all")
    assert d["cooldown_secs"] == 300 and d["event_source"] == "semantic"


def test_create_validation(ks: KeyedServer) -> None:
    ok = {"name": "v", "concept": "c", "threshold": 0.5, "actions": ["write_event"]}
    bad = [
        {**ok, "threshold": 1.5},
        {**ok, "threshold": -0.1},
        {**ok, "actions": []},
        {**ok, "actions": ["explode"]},
        {**ok, "actions": ["webhook"]},  # the webhook action needs a URL
        {**ok, "actions": ["webhook"], "webhook_url": "ftp://x"},
        {**ok, "event_source": "branch_lifecycle"},
        {**ok, "cooldown_secs": -1},
        {k: v for k, v in ok.items() if k != "concept"},
        {k: v for k, v in ok.items() if k != "threshold"},
        {**ok, "name": ""},
    ]
    for body in bad:
        r = ks.request("POST", BASE, key="admin", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"] in ("invalid_request", "invalid_argument")
    create(ks, name="dup", concept="c")
    r = ks.request("POST", BASE, key="admin", json={**ok, "name": "dup"})
    assert r.status_code == 409


def test_auth_and_scopes(ks: KeyedServer) -> None:
    body = {"name": "n", "concept": "c", "threshold": 0.5, "actions": ["write_event"]}
    assert ks.request("GET", BASE).status_code == 401
    assert ks.request("GET", BASE, headers={"Authorization": "ApiKey hd_live_x"}).status_code == 401
    r = ks.request("POST", BASE, key="analyst", json=body)
    assert r.status_code == 403 and r.json()["error"] == "forbidden"
    assert ks.request("POST", BASE, key="auditor", json=body).status_code == 403
    assert ks.request("GET", BASE, key="analyst").status_code == 200
    assert ks.request("GET", BASE, key="auditor").status_code == 200


def test_list_org_and_agent_views(ks: KeyedServer) -> None:
    org = create(ks, name="list-org", concept="org wide concept")
    mine = create(ks, "bot", name="list-bot", concept="bot concept")
    assert mine["scope"] == "agent" and mine["agent_id"] == "bot"
    all_ids = {t["id"] for t in ks.request("GET", BASE, key="admin").json()}
    assert {org["id"], mine["id"]} <= all_ids
    bot_view = ks.request("GET", BASE, key="bot").json()
    assert {t["agent_id"] for t in bot_view} == {"bot"} and mine["id"] in {
        t["id"] for t in bot_view
    }
    assert ks.request("GET", BASE, key="bot2").json() == []
    for key, org_id in (("admin", "org2"), ("other", "local")):
        assert ks.request("GET", f"/v1/organizations/{org_id}/triggers", key=key).status_code == 404
    assert ks.request("GET", "/v1/organizations/org2/triggers", key="other").json() == []


def test_update(ks: KeyedServer) -> None:
    t = create(ks, name="to-update", concept="cost alerts")
    r = ks.request(
        "PUT", f"{BASE}/{t['id']}", key="admin", json={"threshold": 0.9, "enabled": False}
    )
    assert r.status_code == 200, r.text
    u = r.json()
    assert (u["threshold"], u["enabled"], u["name"]) == (0.9, False, "to-update")
    assert set(u) >= SEED_FIELDS
    r = ks.request(
        "PUT", f"{BASE}/{t['id']}", key="admin",
        json={"name": "renamed", "actions": ["webhook", "write_event"], "webhook_url": HOOK,
              "cooldown_secs": 5},
    )  # fmt: skip
    u = r.json()
    assert r.status_code == 200 and u["name"] == "renamed" and u["cooldown_secs"] == 5
    assert u["actions"] == ["webhook", "write_event"] and u["action_config"]["url"] == HOOK
    create(ks, name="taken", concept="c")
    assert (
        ks.request("PUT", f"{BASE}/{t['id']}", key="admin", json={"name": "taken"}).status_code
        == 409
    )
    for body in ({"threshold": 2}, {"actions": []}, {"actions": ["nope"]}):
        assert ks.request("PUT", f"{BASE}/{t['id']}", key="admin", json=body).status_code == 422
    # Dropping the URL while the webhook action stays is refused.
    r = ks.request("PUT", f"{BASE}/{t['id']}", key="admin", json={"action_config": {}})
    assert r.status_code == 422
    assert (
        ks.request("PUT", f"{BASE}/{t['id']}", key="bot", json={"enabled": True}).status_code == 404
    )
    assert ks.request("PUT", f"{BASE}/{t['id']}", key="analyst", json={}).status_code == 403
    path = f"/v1/organizations/org2/triggers/{t['id']}"
    assert ks.request("PUT", path, key="other", json={"enabled": True}).status_code == 404
    # "nope" is no id: a name, and no trigger has it.
    assert ks.request("PUT", f"{BASE}/nope", key="admin", json={}).status_code == 404
    assert ks.request("PUT", f"{BASE}/{'x' * 1001}", key="admin", json={}).status_code == 422
    assert ks.request("PUT", f"{BASE}/{uuid.uuid4()}", key="admin", json={}).status_code == 404


def test_test_records_nothing(ks: KeyedServer) -> None:
    concept = "SELECT ssn, email, phone FROM customers"
    t = create(ks, name="test-me", concept=concept, threshold=0.9)
    r = ks.request("POST", f"{BASE}/{t['id']}/test", key="analyst", json={"text": concept})
    assert r.status_code == 200, r.text
    res = r.json()
    assert set(res) >= {"trigger_id", "trigger_name", "similarity", "would_fire", "model_used",
                        "model_dimensions"}  # fmt: skip
    assert res["trigger_id"] == t["id"] and res["trigger_name"] == "test-me"
    assert res["similarity"] > 0.99 and res["would_fire"] is True
    assert (res["model_used"], res["model_dimensions"]) == ("hash-384", 384)
    far = ks.request("POST", f"{BASE}/{t['id']}/test", key="admin", json={"text": "hello"}).json()
    assert far["would_fire"] is (far["similarity"] >= 0.9) and far["would_fire"] is False
    assert ks.request("GET", f"{BASE}/{t['id']}/fires", key="auditor").json() == []
    listed = next(x for x in ks.request("GET", BASE, key="admin").json() if x["id"] == t["id"])
    assert listed["fire_count"] == 0
    assert ks.request("POST", f"{BASE}/{t['id']}/test", key="admin", json={}).status_code == 422
    assert (
        ks.request("POST", f"{BASE}/{t['id']}/test", key="bot", json={"text": "x"}).status_code
        == 404
    )


def test_fires_after_a_matching_memory(ks: KeyedServer) -> None:
    text = "customer ssn numbers were exported to a spreadsheet"
    t = create(ks, name="fire-me", concept=text, threshold=0.95, actions=["flag_for_review"])
    mem = {"agent_id": "bot", "memory_type": "episodic", "content": text, "wait": True}
    assert ks.request("POST", "/v1/organizations/local/agent-memory", key="bot", json=mem).ok
    deadline, fires = time.time() + 15, []
    while time.time() < deadline and not fires:
        fires = ks.request("GET", f"{BASE}/{t['id']}/fires", key="auditor").json()
        time.sleep(0.1)
    assert len(fires) == 1, fires
    f = fires[0]
    assert set(f) >= FIRE_FIELDS
    assert (f["trigger_id"], f["org_id"], f["input_text"]) == (t["id"], "local", text)
    assert f["similarity"] > 0.99 and f["action_taken"] == "flag_for_review"
    assert f["source"] == "memory" and f["source_agent_id"] == "bot"
    listed = next(x for x in ks.request("GET", BASE, key="admin").json() if x["id"] == t["id"])
    assert listed["fire_count"] == 1
    # QueryAuditRead: analysts and agent keys lack it.
    assert ks.request("GET", f"{BASE}/{t['id']}/fires", key="analyst").status_code == 403
    assert ks.request("GET", f"{BASE}/{t['id']}/fires", key="bot").status_code == 403
    assert ks.request("GET", f"{BASE}/{t['id']}/fires", key="admin").status_code == 200
    path = f"/v1/organizations/org2/triggers/{t['id']}/fires"
    assert ks.request("GET", path, key="other").status_code == 404
    assert ks.request("GET", f"{BASE}/{uuid.uuid4()}/fires", key="auditor").status_code == 404


def test_reembed_concept_and_delete(ks: KeyedServer) -> None:
    t = create(ks, name="short-lived", concept="temporary concept")
    r = ks.request("POST", f"{BASE}/{t['id']}/re-embed-concept", key="admin")
    assert r.status_code == 200, r.text
    assert r.json()["trigger_id"] == t["id"] and r.json()["status"] == "reembedded"
    assert r.json()["embedding_model"] == "hash-384"
    assert (
        ks.request("POST", f"{BASE}/{t['id']}/re-embed-concept", key="analyst").status_code == 403
    )
    assert ks.request("DELETE", f"{BASE}/{t['id']}", key="bot").status_code == 404
    assert ks.request("DELETE", f"{BASE}/{t['id']}", key="analyst").status_code == 403
    path = f"/v1/organizations/org2/triggers/{t['id']}"
    assert ks.request("DELETE", path, key="other").status_code == 404
    r = ks.request("DELETE", f"{BASE}/{t['id']}", key="admin")
    assert r.status_code == 200 and r.json() == {"trigger_id": t["id"], "status": "deleted"}
    assert ks.request("DELETE", f"{BASE}/{t['id']}", key="admin").status_code == 404
    assert ks.request("POST", f"{BASE}/{t['id']}/re-embed-concept", key="admin").status_code == 404
    assert t["id"] not in {x["id"] for x in ks.request("GET", BASE, key="admin").json()}


def test_agent_key_manages_its_own_trigger(ks: KeyedServer) -> None:
    t = create(ks, "bot2", name="bot2-own", concept="bot2 concept", actions=["agent_notify"])
    assert t["scope"] == "agent" and t["agent_id"] == "bot2"
    r = ks.request("PUT", f"{BASE}/{t['id']}", key="bot2", json={"threshold": 0.5})
    assert r.status_code == 200 and r.json()["threshold"] == 0.5
    assert ks.request("POST", f"{BASE}/{t['id']}/test", key="bot2", json={"text": "x"}).ok
    with psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user="bot2", password=ks.secrets["bot2"],
        dbname="hatidata", autocommit=True,
    ) as conn:  # fmt: skip
        rows = conn.execute("SELECT id::VARCHAR, threshold FROM list_triggers()").fetchall()
    assert (t["id"], 0.5) in rows
    assert ks.request("DELETE", f"{BASE}/{t['id']}", key="bot2").json()["status"] == "deleted"


def test_public_client_round_trip(ks: KeyedServer) -> None:
    from hatidata_agent.control_plane import ControlPlaneClient
    from requests import HTTPError

    cp = ControlPlaneClient(base_url=ks.url, api_key=ks.secrets["admin"], org_id="local")
    t = cp.create_trigger(name="client", concept="client concept", actions=["write_event"])
    assert t["name"] == "client" and t["cooldown_secs"] == 60
    assert t["id"] in {x["id"] for x in cp.list_triggers()}
    res = cp.test_trigger(t["id"], "client concept")
    assert res["would_fire"] is True and res["similarity"] > 0.99
    assert cp.delete_trigger(t["id"]) == {"trigger_id": t["id"], "status": "deleted"}
    # The client's default action is a webhook, and there is no URL to send it to.
    with pytest.raises(HTTPError) as e:
        cp.create_trigger(name="no-url", concept="c")
    assert e.value.response.status_code == 422
    assert "webhook_url" in e.value.response.json()["message"]
    assert "HATIDATA_TRIGGER_WEBHOOK_URL" in e.value.response.json()["hint"]


def test_default_webhook_url(tmp_path) -> None:
    """trigger_webhook_url: a webhook action without a URL posts there (REST, the public
    client and SQL alike); the SSRF rules apply to the default too."""
    from hatidata_agent.control_plane import ControlPlaneClient

    from tests.rest.rest_support import KeySpec, keyed_server
    from tests.security.test_webhook_ssrf import Receiver

    hook = Receiver()
    ks = keyed_server(
        tmp_path / "ok", {"admin": KeySpec("admin")}, "--trigger-webhook-url", hook.url
    )
    try:
        cp = ControlPlaneClient(base_url=ks.url, api_key=ks.secrets["admin"], org_id="local")
        text = "payroll figures leaked into a public channel"
        t = cp.create_trigger(name="default-hook", concept=text, threshold=0.95)
        assert t["actions"] == ["webhook"] and t["action_config"]["url"] == hook.url
        own = create(ks, name="own-hook", concept="other", actions=["webhook"], webhook_url=HOOK)
        assert own["action_config"]["url"] == HOOK  # a URL given wins
        # Turning the webhook on later picks the default up as well.
        later = create(ks, name="later", concept="later concept")
        r = ks.request("PUT", f"{BASE}/{later['id']}", key="admin", json={"actions": ["webhook"]})
        assert r.status_code == 200 and r.json()["action_config"]["url"] == hook.url
        dsn = f"host=127.0.0.1 port={ks.server.port} user=u dbname=hatidata"
        with psycopg.connect(dsn, password=ks.secrets["admin"], autocommit=True) as con:
            row = con.execute(
                "SELECT action_config FROM register_trigger('sql-hook', 'sql concept', 0.9,"
                " actions := '[\"webhook\"]')"
            ).fetchone()
        assert "127.0.0.1" in str(row[0])
        mem = {"agent_id": "bot", "memory_type": "episodic", "content": text, "wait": True}
        assert ks.request("POST", "/v1/organizations/local/agent-memory", key="admin", json=mem).ok
        deadline = time.time() + 15
        while time.time() < deadline and not hook.requests:
            time.sleep(0.1)
        assert hook.requests and hook.requests[0][1]["event"] == "trigger.fired"
        assert hook.requests[0][1]["trigger_id"] == t["id"]
    finally:
        ks.server.stop()
        hook.close()
    # A metadata address as the default is refused when a trigger would use it.
    metadata = "http://169.254.169.254/latest/meta-data"
    ks = keyed_server(
        tmp_path / "bad", {"admin": KeySpec("admin")}, "--trigger-webhook-url", metadata
    )
    try:
        r = ks.request(
            "POST", BASE, key="admin",
            json={"name": "n", "concept": "c", "threshold": 0.5, "actions": ["webhook"]},
        )  # fmt: skip
        assert r.status_code == 422 and "trigger_webhook_url" in r.json()["message"], r.text
    finally:
        ks.server.stop()


def test_triggers_by_name(ks: KeyedServer) -> None:
    """{trigger_id} in a path is the trigger's id or its name."""
    t = create(ks, name="by-name", concept="refund request")
    path = f"{BASE}/by-name"
    r = ks.request("PUT", path, key="admin", json={"cooldown_secs": 7})
    assert r.status_code == 200 and r.json()["id"] == t["id"] and r.json()["cooldown_secs"] == 7
    r = ks.request("POST", f"{path}/test", key="admin", json={"text": "refund request"})
    assert r.status_code == 200 and r.json()["trigger_id"] == t["id"], r.text
    assert ks.request("GET", f"{path}/fires", key="auditor").json() == []
    r = ks.request("POST", f"{path}/re-embed-concept", key="admin")
    assert r.status_code == 200 and r.json()["trigger_id"] == t["id"], r.text
    assert ks.request("PUT", path, key="bot", json={"enabled": True}).status_code == 404
    # The agent "bot" has a trigger of the same name: its key reaches its own, the org key
    # (which sees both) is told the name is ambiguous, with both ids.
    mine = create(ks, key="bot", name="by-name", concept="refund request")
    assert ks.request("PUT", path, key="bot", json={"cooldown_secs": 9}).json()["id"] == mine["id"]
    r = ks.request("DELETE", path, key="admin")
    assert r.status_code == 422 and r.json()["error"] == "invalid_argument", r.text
    assert t["id"] in r.json()["message"] and mine["id"] in r.json()["message"]
    assert ks.request("DELETE", path, key="bot").json()["trigger_id"] == mine["id"]
    r = ks.request("DELETE", path, key="admin")
    assert r.status_code == 200 and r.json()["trigger_id"] == t["id"], r.text
    assert ks.request("DELETE", path, key="admin").status_code == 404
