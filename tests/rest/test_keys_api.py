"""REST API-key management (agent-keys, api-keys) against a live keyed server, with the
new secrets checked on REST and on the wire."""

from __future__ import annotations

import uuid

import psycopg
import pytest
import requests
from hatidata_agent.control_plane import ControlPlaneClient

from tests.rest.rest_support import KeySpec, keyed_server

KEYS = {
    "admin": KeySpec("admin"),
    "bot": KeySpec("agent", agent_id="bot"),
    "other_org": KeySpec("admin", org_id="org2"),
    "ro": KeySpec("analyst"),
    # Not an admin, but may manage keys: it must not hand out more than it holds.
    "limited": KeySpec("analyst", scopes=["keys:manage", "cot:read", "memory:read"]),
}
BASE = "/v1/organizations/local"


@pytest.fixture(scope="module")
def ks(tmp_path_factory):
    server = keyed_server(tmp_path_factory.mktemp("keys"), KEYS)
    yield server
    server.server.stop()


@pytest.fixture(scope="module")
def client(ks):
    return ControlPlaneClient(base_url=ks.url, api_key=ks.secrets["admin"], org_id="local")


def rest(ks, secret: str, method: str = "GET", path: str = "/v1/cot/sessions", **kw):
    headers = {"Authorization": f"ApiKey {secret}"}
    return requests.request(method, ks.url + path, headers=headers, timeout=30, **kw)


def wire(ks, secret: str, user: str = "someone"):
    dsn = f"host=127.0.0.1 port={ks.server.port} user={user} dbname=hatidata password={secret}"
    with psycopg.connect(dsn, connect_timeout=10) as con:
        return con.execute("SELECT 41 + 1").fetchone()[0]


def wire_refused(ks, secret: str) -> None:
    with pytest.raises(psycopg.OperationalError) as info:
        wire(ks, secret)
    assert info.value.sqlstate == "28P01" or "authentication failed" in str(info.value)


def test_agent_key_lifecycle_with_control_plane_client(ks, client):
    created = client.create_agent_key(
        "research-agent", framework="langchain", description="reads prices", expires_in_days=30
    )
    secret = created["raw_key"]
    assert secret.startswith("hd_agent_") and secret.startswith(created["key_prefix"])
    assert created["agent_name"] == "research-agent" and created["framework"] == "langchain"
    assert created["description"] == "reads prices" and created["role"] == "agent"
    assert created["status"] == "active" and created["expires_at"] and created["created_at"]
    assert "cot:write" in created["scopes"] and "keys:manage" not in created["scopes"]

    # The new key works on REST and on the wire, as its agent.
    assert rest(ks, secret).status_code == 200
    assert wire(ks, secret) == 42
    trace = {
        "trace_id": str(uuid.uuid4()),
        "session_id": "s1",
        "agent_id": "research-agent",
        "timestamp": "2026-03-20T14:00:01Z",
        "trace_type": "thought",
        "content": {"text": "hi"},
    }
    r = rest(ks, secret, "POST", "/v1/cot/ingest", json={"traces": [trace]})
    assert r.status_code == 200, r.text

    listed = client.list_agent_keys()
    mine = [k for k in listed if k["id"] == created["id"]]
    assert len(mine) == 1 and "raw_key" not in mine[0]
    assert mine[0]["status"] == "active" and mine[0]["key_prefix"] == created["key_prefix"]
    assert mine[0]["last_used_at"] is not None
    assert all(k["agent_id"] for k in listed)  # org keys are not agent keys
    got = client.get_agent_key(created["id"])
    assert got["agent_name"] == "research-agent" and "raw_key" not in got

    rotated = client.rotate_agent_key(created["id"])
    assert rotated["old_key_id"] == created["id"] and rotated["grace_period_hours"] == 0
    new = rotated["new_key"]
    assert new.startswith("hd_agent_") and rotated["new_key_id"] != created["id"]
    # The old secret was cached by the requests above; rotation drops it at once.
    assert rest(ks, secret).status_code == 401
    wire_refused(ks, secret)
    assert rest(ks, new).status_code == 200 and wire(ks, new) == 42
    assert client.get_agent_key(rotated["new_key_id"])["agent_id"] == "research-agent"
    assert client.get_agent_key(created["id"])["status"] == "revoked"

    revoked = client.revoke_agent_key(rotated["new_key_id"])
    assert revoked["key_id"] == rotated["new_key_id"] and revoked["revoked"] is True
    assert rest(ks, new).status_code == 401
    wire_refused(ks, new)
    r = ks.request("POST", f"{BASE}/agent-keys/{created['id']}/rotate", key="admin", json={})
    assert r.status_code == 409


def test_rotation_with_grace_keeps_the_old_key(ks):
    r = ks.request("POST", f"{BASE}/agent-keys", key="admin", json={"agent_name": "graceful"})
    assert r.status_code == 201
    old = r.json()
    body = {"grace_period_hours": 2}
    rotated = ks.request(
        "POST", f"{BASE}/agent-keys/{old['id']}/rotate", key="admin", json=body
    ).json()
    assert rotated["grace_period_hours"] == 2 and rotated["old_key_status"] == "active"
    assert rotated["old_key_expires_at"] is not None
    assert rest(ks, old["raw_key"]).status_code == 200
    assert rest(ks, rotated["new_key"]).status_code == 200


def test_update_and_unsupported_fields(ks):
    r = ks.request("POST", f"{BASE}/agent-keys", key="admin", json={"agent_name": "upd"})
    key = r.json()
    bad = ({"allowed_tables": ["a.b.c"]}, {"allowed_tables": ["s.*"]}, {"plan": "growth"})
    for extra in (*bad, {"allowed_schemas": ["x.y"]}, {"allowed_tables": [""]}):
        body = {"agent_name": "upd2", **extra}
        r = ks.request("POST", f"{BASE}/agent-keys", key="admin", json=body)
        assert r.status_code == 422, extra
    r = ks.request(
        "PUT",
        f"{BASE}/agent-keys/{key['id']}",
        key="admin",
        json={"name": "nightly", "description": "runs at night", "framework": "crewai"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "nightly" and r.json()["description"] == "runs at night"
    assert r.json()["framework"] == "crewai" and r.json()["agent_id"] == "upd"
    r = ks.request("PUT", f"{BASE}/agent-keys/{key['id']}", key="admin", json={"agent_name": "x"})
    assert r.status_code == 422
    r = ks.request("PUT", f"{BASE}/agent-keys/{key['id']}", key="admin", json={"agent_name": "upd"})
    assert r.status_code == 200
    # Limits are stored normalised (public = main) and can be changed or lifted.
    r = ks.request(
        "PUT", f"{BASE}/agent-keys/{key['id']}", key="admin", json={"allowed_tables": ["T"]}
    )
    assert r.status_code == 200 and r.json()["allowed_tables"] == ["main.t"], r.text
    assert r.json()["allowed_schemas"] is None
    body = {"allowed_schemas": ["Public", "sales"]}
    r = ks.request("PUT", f"{BASE}/agent-keys/{key['id']}", key="admin", json=body)
    assert r.json()["allowed_schemas"] == ["main", "sales"]
    assert r.json()["allowed_tables"] == ["main.t"]  # left out: kept
    body = {"allowed_schemas": None, "allowed_tables": None}
    r = ks.request("PUT", f"{BASE}/agent-keys/{key['id']}", key="admin", json=body)
    assert (r.json()["allowed_schemas"], r.json()["allowed_tables"]) == (None, None)


def test_org_keys(ks):
    r = ks.request(
        "POST", f"{BASE}/api-keys", key="admin", json={"name": "audit", "role": "auditor"}
    )
    assert r.status_code == 201, r.text
    key = r.json()
    assert key["raw_key"].startswith("hd_live_") and key["agent_id"] is None
    assert key["role"] == "auditor" and "cot:write" in key["scopes"]
    assert "memory:write" not in key["scopes"]
    listed = ks.request("GET", f"{BASE}/api-keys", key="admin").json()
    assert key["id"] in {k["id"] for k in listed} and all(k["agent_id"] is None for k in listed)
    assert all("raw_key" not in k for k in listed)
    # An org key is not an agent key and vice versa.
    assert ks.request("GET", f"{BASE}/agent-keys/{key['id']}", key="admin").status_code == 404
    assert rest(ks, key["raw_key"]).status_code == 200
    assert wire(ks, key["raw_key"]) == 42
    rotated = ks.request("POST", f"{BASE}/api-keys/{key['id']}/rotate", key="admin")
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["new_key"]
    assert new.startswith("hd_live_") and rest(ks, key["raw_key"]).status_code == 401
    new_id = rotated.json()["new_key_id"]
    r = ks.request("DELETE", f"{BASE}/api-keys/{new_id}", key="admin")
    assert r.json() == {"key_id": new_id, "revoked": True, "revoked_at": r.json()["revoked_at"]}
    assert rest(ks, new).status_code == 401
    r = ks.request("POST", f"{BASE}/api-keys", key="admin", json={"role": "root"})
    assert r.status_code == 422
    r = ks.request("POST", f"{BASE}/api-keys", key="admin", json={"scopes": ["cot:fly"]})
    assert r.status_code == 422


def test_other_org_and_missing_scope(ks):
    r = ks.request("POST", f"{BASE}/api-keys", key="admin", json={"role": "analyst"})
    local_key = r.json()["id"]
    for method, path in (
        ("GET", f"{BASE}/agent-keys"),
        ("GET", f"{BASE}/api-keys"),
        ("POST", f"{BASE}/agent-keys"),
        ("DELETE", f"{BASE}/api-keys/{local_key}"),
    ):
        body = {"agent_name": "sneaky"} if method == "POST" else None
        assert ks.request(method, path, key="other_org", json=body).status_code == 404, path
        assert ks.request(method, path, key="ro", json=body).status_code == 403, path
        assert ks.request(method, path, key="bot", json=body).status_code == 403, path
    # org2's admin cannot reach a local key through its own org either.
    r = ks.request("DELETE", f"/v1/organizations/org2/api-keys/{local_key}", key="other_org")
    assert r.status_code == 404
    assert ks.request("GET", f"{BASE}/agent-keys/not-a-uuid", key="admin").status_code == 404
    assert ks.request("GET", f"{BASE}/agent-keys/{uuid.uuid4()}", key="admin").status_code == 404


def test_no_escalation(ks):
    r = ks.request("POST", f"{BASE}/api-keys", key="limited", json={"role": "admin"})
    assert r.status_code == 403
    r = ks.request("POST", f"{BASE}/agent-keys", key="limited", json={"agent_name": "a"})
    assert r.status_code == 403 and "memory:write" in r.json()["message"]
    body = {"agent_name": "reader", "role": "analyst", "scopes": ["cot:read"]}
    r = ks.request("POST", f"{BASE}/agent-keys", key="limited", json=body)
    assert r.status_code == 201 and r.json()["scopes"] == ["cot:read"]
    reader = r.json()
    assert rest(ks, reader["raw_key"]).status_code == 200
    assert rest(ks, reader["raw_key"], "GET", f"{BASE}/agent-keys").status_code == 403
    # It may not rotate (and so obtain the secret of) a key stronger than itself.
    admin_key = ks.request("POST", f"{BASE}/api-keys", key="admin", json={"role": "admin"}).json()
    r = ks.request("POST", f"{BASE}/api-keys/{admin_key['id']}/rotate", key="limited")
    assert r.status_code == 403
    r = ks.request("DELETE", f"{BASE}/agent-keys/{reader['id']}", key="limited")
    assert r.status_code == 200 and rest(ks, reader["raw_key"]).status_code == 401


def test_agent_key_body_takes_agent_id_for_agent_name(ks):
    """Responses and every other route call the agent `agent_id`; create accepts it too."""
    body = {"agent_id": "alias-bot"}
    r = ks.request("POST", f"{BASE}/agent-keys", key="admin", json=body)
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["agent_id"] == made["agent_name"] == "alias-bot"
    assert made["raw_key"].startswith("hd_agent_")
