"""REST chain-of-thought ledger (/v1/cot) against a live keyed server."""

from __future__ import annotations

import hashlib
import json
import uuid

import duckdb
import pytest
from hatidata_agent.control_plane import ControlPlaneClient

from proxy.agent.ledger.hashing import canonical_bytes
from tests.conftest import start_server
from tests.rest.rest_support import KeySpec, keyed_server

KEYS = {
    "admin": KeySpec("admin"),
    "bot": KeySpec("agent", agent_id="bot"),
    "other_org": KeySpec("admin", org_id="org2"),
    "ro": KeySpec("analyst"),
    "auditor": KeySpec("auditor"),
}


@pytest.fixture(scope="module")
def ks(tmp_path_factory):
    server = keyed_server(tmp_path_factory.mktemp("cot"), KEYS)
    yield server
    server.server.stop()


def sha(content) -> str:
    return hashlib.sha256(canonical_bytes(content)).hexdigest()


def trace(session: str, agent: str, content: dict, kind: str = "thought", **kw) -> dict:
    return {
        "trace_id": str(uuid.uuid4()),
        "session_id": session,
        "agent_id": agent,
        "timestamp": "2026-03-20T14:00:01Z",
        "trace_type": kind,
        "content": content,
        "content_hash": sha(content),
        **kw,
    }


def session_id() -> str:
    return f"sess-{uuid.uuid4().hex[:8]}"


def test_ingest_replay_verify_list_export(ks):
    sid = session_id()
    first = trace(sid, "research-agent", {"text": "User asked about NVDA", "n": 1.0})
    second = trace(
        sid, "research-agent", {"tool": "run_sql"}, "tool_call", parent_trace_id=first["trace_id"]
    )
    del second["content_hash"]  # optional: the server computes it
    r = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": [first, second]})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "ingested": 2,
        "skipped": 0,
        "trace_ids": [first["trace_id"], second["trace_id"]],
    }
    # Retrying the same batch is idempotent.
    again = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": [first, second]})
    assert again.json()["ingested"] == 0 and again.json()["skipped"] == 2

    replay = ks.request("GET", f"/v1/cot/sessions/{sid}/replay", key="admin").json()
    assert replay["session_id"] == sid and replay["agent_id"] == "research-agent"
    assert replay["total_steps"] == 2 and replay["chain_valid"] is True
    s0, s1 = replay["steps"]
    assert (s0["step_index"], s0["trace_type"], s0["trace_id"]) == (0, "thought", first["trace_id"])
    assert s0["content"] == {"text": "User asked about NVDA", "n": 1}
    assert s0["content_hash"] == first["content_hash"]
    assert s0["timestamp"].startswith("2026-03-20T14:00:01") and s0["parent_trace_id"] is None
    assert s1["parent_trace_id"] == first["trace_id"] and s1["content_hash"] == sha(
        {"tool": "run_sql"}
    )

    verify = ks.request("GET", f"/v1/cot/sessions/{sid}/verify", key="admin").json()
    assert verify["chain_valid"] is True and verify["total_traces"] == 2
    assert verify["invalid_hashes"] == []

    listed = ks.request("GET", "/v1/cot/sessions", key="admin").json()
    mine = [s for s in listed if s["session_id"] == sid]
    assert mine == [
        {
            "session_id": sid,
            "agent_id": "research-agent",
            "total_steps": 2,
            "chain_valid": True,
            "started_at": mine[0]["started_at"],
            "ended_at": mine[0]["ended_at"],
        }
    ]
    assert mine[0]["started_at"].startswith("2026-03-20T14:00:01")

    export = ks.request("GET", f"/v1/cot/sessions/{sid}/export", key="ro")
    assert export.status_code == 200
    assert export.headers["content-disposition"] == f'attachment; filename="cot-{sid}.json"'
    doc = export.json()
    assert doc["session"]["session_id"] == sid and len(doc["steps"]) == 2
    assert doc["verification"]["chain_valid"] is True


def test_all_or_nothing_and_hash_mismatch(ks):
    sid = session_id()
    good = trace(sid, "a1", {"text": "fine"})
    bad = trace(sid, "a1", {"text": "tampered"})
    bad["content_hash"] = sha({"text": "something else"})
    r = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": [good, bad]})
    assert r.status_code == 422 and r.json()["error"] == "invalid_argument", r.text
    assert "traces[1].content_hash" in r.json()["message"]
    assert ks.request("GET", f"/v1/cot/sessions/{sid}/replay", key="admin").status_code == 404
    # The same content_hash as plain json.dumps with sorted keys is accepted.
    good["content_hash"] = hashlib.sha256(json.dumps(good["content"]).encode()).hexdigest()
    r = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": [good]})
    assert r.status_code == 200 and r.json()["ingested"] == 1


def test_batch_limits_and_validation(ks):
    sid = session_id()
    many = [trace(sid, "a1", {"i": i}) for i in range(1001)]
    r = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": many})
    assert r.status_code == 422 and r.json()["error"] == "invalid_request"
    assert ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": []}).status_code == 422
    thousand = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": many[:1000]})
    assert thousand.status_code == 200 and thousand.json()["ingested"] == 1000
    for broken in (
        {"trace_type": "dream"},
        {"trace_id": "not-a-uuid"},
        {"timestamp": "yesterday"},
        {"content": "a string, not an object"},
        {"surprise": 1},
        {"content_hash": "xyz"},
    ):
        body = {"traces": [{**trace(session_id(), "a1", {"x": 1}), **broken}]}
        r = ks.request("POST", "/v1/cot/ingest", key="admin", json=body)
        assert r.status_code == 422, (broken, r.text)
    wrong_org = trace(session_id(), "a1", {"x": 1}, org_id="org2")
    r = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": [wrong_org]})
    assert r.status_code == 403


def test_agent_key_is_confined_to_its_agent(ks):
    own, foreign = session_id(), session_id()
    r = ks.request("POST", "/v1/cot/ingest", key="bot", json={"traces": [trace(own, "bot", {})]})
    assert r.status_code == 200, r.text
    r = ks.request(
        "POST",
        "/v1/cot/ingest",
        key="bot",
        json={"traces": [trace(own, "bot", {"a": 1}), trace(foreign, "other", {})]},
    )
    assert r.status_code == 403 and r.json()["error"] == "forbidden"
    assert (
        ks.request("GET", f"/v1/cot/sessions/{own}/replay", key="admin").json()["total_steps"] == 1
    )  # the 403 batch stored nothing
    ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": [trace(foreign, "x", {})]})
    listed = ks.request("GET", "/v1/cot/sessions", key="bot").json()
    assert {s["agent_id"] for s in listed} == {"bot"}
    assert ks.request("GET", f"/v1/cot/sessions/{foreign}/verify", key="bot").status_code == 404
    r = ks.request("GET", "/v1/cot/sessions?agent_id=x", key="bot")
    assert r.status_code == 403
    # The org key sees both agents; the analyst reads but cannot ingest.
    agents = {s["agent_id"] for s in ks.request("GET", "/v1/cot/sessions", key="ro").json()}
    assert {"bot", "x"} <= agents
    r = ks.request("POST", "/v1/cot/ingest", key="ro", json={"traces": [trace(own, "bot", {})]})
    assert r.status_code == 403
    r = ks.request("POST", "/v1/cot/ingest", key="auditor", json={"traces": [trace(own, "b", {})]})
    assert r.status_code == 200


def test_other_org_and_ambiguous_sessions(ks):
    sid = session_id()
    batch = [trace(sid, "alpha", {"n": 1}), trace(sid, "beta", {"n": 2})]
    assert ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": batch}).ok
    for what in ("replay", "verify", "export"):
        r = ks.request("GET", f"/v1/cot/sessions/{sid}/{what}", key="other_org")
        assert r.status_code == 404, what
        r = ks.request("GET", f"/v1/cot/sessions/{sid}/{what}", key="admin")
        assert r.status_code == 409 and "alpha" in r.json()["hint"], what
        r = ks.request("GET", f"/v1/cot/sessions/{sid}/{what}?agent_id=beta", key="admin")
        assert r.status_code == 200, what
    assert ks.request("GET", "/v1/cot/sessions", key="other_org").json() == []
    r = ks.request("GET", f"/v1/cot/sessions/{sid}/replay?agent_id=gamma", key="admin")
    assert r.status_code == 404


def test_approvals_are_admin_only(ks):
    sid = session_id()
    t = trace(sid, "bot", {"decision": "buy"})
    assert ks.request("POST", "/v1/cot/ingest", key="bot", json={"traces": [t]}).ok
    body = {
        "session_id": sid,
        "agent_id": "bot",
        "decision": "approve",
        "trace_id": t["trace_id"],
        "reason": "looks right",
    }
    for key in ("bot", "ro", "auditor"):
        assert ks.request("POST", "/v1/cot/approvals", key=key, json=body).status_code == 403
    r = ks.request("POST", "/v1/cot/approvals", key="admin", json=body)
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["decision"] == "approve" and a["session_id"] == sid and a["agent_id"] == "bot"
    assert a["trace_id"] == t["trace_id"] and a["reason"] == "looks right"
    assert a["reviewed_by"].startswith("admin (key ") and a["created_at"].endswith("Z")
    uuid.UUID(a["id"])
    unknown_step = {**body, "trace_id": str(uuid.uuid4())}
    assert (
        ks.request("POST", "/v1/cot/approvals", key="admin", json=unknown_step).status_code == 404
    )
    elsewhere = {**body, "agent_id": "nobody"}
    assert ks.request("POST", "/v1/cot/approvals", key="admin", json=elsewhere).status_code == 404
    assert ks.request("POST", "/v1/cot/approvals", key="other_org", json=body).status_code == 404
    bad = {**body, "decision": "maybe"}
    assert ks.request("POST", "/v1/cot/approvals", key="admin", json=bad).status_code == 422
    doc = ks.request("GET", f"/v1/cot/sessions/{sid}/export", key="admin").json()
    assert [x["id"] for x in doc["approvals"]] == [a["id"]]


def test_control_plane_client(ks):
    client = ControlPlaneClient(base_url=ks.url, api_key=ks.secrets["admin"], org_id="local")
    sid, traces = ControlPlaneClient.build_cot_session(
        "cp-agent",
        "local",
        [
            {"type": "thought", "content": {"text": "look at prices"}},
            {"type": "tool_call", "content": {"tool": "run_sql", "args": [1, 2.5, None]}},
            {"type": "tool_result", "content": {"rows": 3}},
        ],
    )
    result = client.ingest_cot(traces)
    assert result["ingested"] == 3 and result["trace_ids"] == [t["trace_id"] for t in traces]
    assert any(s["session_id"] == sid for s in client.list_cot_sessions())
    replay = client.replay_cot(sid)
    assert [s["trace_type"] for s in replay["steps"]] == ["thought", "tool_call", "tool_result"]
    assert replay["chain_valid"] is True
    # The stored content_hash is the ledger's own (RFC 8785), not the client's chain hash.
    assert replay["steps"][1]["content_hash"] == sha(traces[1]["content"])
    assert client.verify_cot(sid)["chain_valid"] is True
    # A client-chained hash whose chain is broken is refused.
    _, forged = ControlPlaneClient.build_cot_session(
        "cp-agent", "local", [{"type": "thought", "content": {"a": 1}}] * 2
    )
    forged[1]["content"] = {"a": 2}
    r = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": forged})
    assert r.status_code == 422 and "traces[1].content_hash" in r.json()["message"]


def test_tampering_is_detected_after_restart(tmp_path):
    ks = keyed_server(tmp_path, {"admin": KeySpec("admin")})
    sid = session_id()
    batch = [trace(sid, "t", {"step": i}) for i in range(3)]
    try:
        assert ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": batch}).ok
    finally:
        ks.server.stop()
    con = duckdb.connect(str(tmp_path / "data" / "hatiproxy.agent.duckdb"))
    con.execute(
        "UPDATE hatidata_internal.cot_traces SET content = '{\"step\":99}' "
        "WHERE session_id = ? AND step_index = 1",
        [sid],
    )
    con.close()
    ks.server = start_server(tmp_path, "--embedding-provider", "hash")
    try:
        verify = ks.request("GET", f"/v1/cot/sessions/{sid}/verify", key="admin").json()
        assert verify["chain_valid"] is False and verify["total_traces"] == 3
        assert verify["first_broken_step"] == 1
        assert verify["invalid_hashes"][0]["step_index"] == 1
        assert verify["invalid_hashes"][0]["trace_id"] == batch[1]["trace_id"]
        assert verify["invalid_hashes"][0]["field"] == "content_hash"
        replay = ks.request("GET", f"/v1/cot/sessions/{sid}/replay", key="admin").json()
        assert replay["chain_valid"] is False
        assert [s["step_valid"] for s in replay["steps"]] == [True, False, True]
        listed = ks.request("GET", "/v1/cot/sessions", key="admin").json()
        assert [s["chain_valid"] for s in listed if s["session_id"] == sid] == [False]
    finally:
        ks.server.stop()


def test_whole_ledger_verify_is_confined_like_the_sessions(ks):
    mine, theirs = session_id(), session_id()
    for key, sid, agent in (("bot", mine, "bot"), ("admin", theirs, "someone-else")):
        body = {"traces": [trace(sid, agent, {"i": i}) for i in range(2)]}
        assert ks.request("POST", "/v1/cot/ingest", key=key, json=body).ok
    whole = ks.request("GET", "/v1/cot/verify", key="admin").json()
    assert whole["ledger_valid"] is True and whole["problems"] == [], whole
    everyone = whole["summary"]["sessions_checked"]
    assert everyone >= 2 and whole["summary"]["org_chain_length"] >= 4
    assert len(whole["summary"]["org_head_hash"]) == 64
    own = ks.request("GET", "/v1/cot/verify", key="bot").json()
    assert own["ledger_valid"] is True and own["summary"]["sessions_checked"] < everyone
    # The organisation chain is the key's organisation's; org2 has none.
    other = ks.request("GET", "/v1/cot/verify", key="other_org").json()
    assert other["summary"]["org_chain_length"] == 0
    assert other["summary"]["sessions_checked"] == 0 and other["ledger_valid"] is True
    assert ks.request("GET", "/v1/cot/verify").status_code == 401
