"""An organisation's admin key is an administrator of its own organisation only.

orgb's admin key is tried against every REST route and MCP tool that takes an id or a
name of orga's data (memories, state, ledger sessions, triggers, branches, keys, usage),
both under orga's path and with orga's ids under its own: every answer is 403 or 404 (or
names nothing of orga's), no answer carries orga's data, and orga's data is unchanged.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.rest.rest_support import KeyedServer, KeySpec, keyed_server
from tests.security.ownership_support import mcp_call

SPECS = {
    "adma": KeySpec("admin", org_id="orga"),
    "alice": KeySpec("agent", org_id="orga", agent_id="alice"),
    "admb": KeySpec("admin", org_id="orgb"),
}
SECRET = "ORGA-SECRET"  # in every piece of orga's data


def mcp(ks: KeyedServer, key: str, tool: str, args: dict, agent: str | None = None) -> dict:
    r = mcp_call(ks.server.mcp_url, tool, args, ks.secrets[key], agent)
    assert r.status_code == 200, r.text
    return r.json()["result"]


def owned(ks: KeyedServer, tool: str, args: dict) -> Any:
    result = mcp(ks, "alice", tool, args)
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


def snapshot(ks: KeyedServer, ids: dict) -> dict:
    """orga's data as orga sees it."""
    org = "/v1/organizations/orga"
    out = {}
    for name, path in (
        ("memories", f"{org}/agent-memory?agent_id=alice"),
        ("triggers", f"{org}/triggers"),
        ("branch", f"{org}/branches/{ids['branch_id']}"),
        ("keys", f"{org}/agent-keys"),
        ("key", f"{org}/agent-keys/{ids['key_id']}"),
        ("replay", f"/v1/cot/sessions/{ids['session']}/replay?agent_id=alice"),
        ("verify", f"/v1/cot/sessions/{ids['session']}/verify?agent_id=alice"),
    ):
        r = ks.request("GET", path, "adma")
        assert r.status_code == 200, (path, r.text)
        out[name] = _stable(r.json())
    out["state"] = owned(ks, "get_agent_state", {"key": "plan"})
    return out


def unchanged(before: dict, after: dict) -> None:
    for name in before:
        assert json.dumps(after[name], sort_keys=True, default=str) == json.dumps(
            before[name], sort_keys=True, default=str
        ), (name, before[name], after[name])


def _stable(value: Any) -> Any:
    """Without what changes on its own (last use, access counts, expiry countdowns)."""
    moving = {"last_used_at", "last_accessed", "access_count", "usage", "query_count",
              "last_query_at", "verified_at", "expires_in_seconds", "cost"}  # fmt: skip
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in moving}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KeyedServer, dict]]:
    ks = keyed_server(tmp_path_factory.mktemp("orgiso"), SPECS)
    session = "s-orga"
    ids = {
        "memory_id": owned(ks, "store_memory", {"content": f"{SECRET} memory"})["memory_id"],
        "trigger_id": owned(ks, "register_trigger", {"name": "t-orga", "concept": SECRET})[
            "trigger_id"
        ],
        "branch_id": owned(ks, "branch_create", {"name": "b-orga"})["branch_id"],
        "session": session,
    }
    owned(ks, "set_agent_state", {"key": "plan", "value": {"secret": SECRET}})
    owned(ks, "log_reasoning_step", {"session_id": session, "content": f"{SECRET} step"})
    for _ in range(300):  # embedded, so the snapshots compare what others did
        listed = ks.request("GET", "/v1/organizations/orga/agent-memory?agent_id=alice", "adma")
        if listed.json()[0]["embedding_status"] == "embedded":
            break
        time.sleep(0.1)
    keys = ks.request("GET", "/v1/organizations/orga/agent-keys", "adma").json()
    ids["key_id"] = next(k for k in keys if k.get("agent_name") == "alice")["key_id"]
    org_keys = ks.request("GET", "/v1/organizations/orga/api-keys", "adma").json()
    ids["org_key_id"] = org_keys[0]["key_id"]
    yield ks, ids
    ks.server.stop()


def rest_cases(ids: dict) -> list[tuple[str, str, dict | None]]:
    m, t, b, k, o = (
        ids[x] for x in ("memory_id", "trigger_id", "branch_id", "key_id", "org_key_id")
    )
    s = ids["session"]
    trigger = {"name": "x", "concept": "x", "threshold": 0.5, "actions": ["flag_for_review"]}
    lifecycle = {"name": "x", "threshold": 1, "actions": ["flag_for_review"],
                 "event_type": "branch_created"}  # fmt: skip
    out: list[tuple[str, str, dict | None]] = []
    for org in ("orga", "orgb"):  # orga's path, and orga's ids under orgb's own path
        p = f"/v1/organizations/{org}"
        out += [
            ("GET", f"{p}/agent-memory?agent_id=alice", None),
            ("GET", f"{p}/agent-memory/search?agent_id=alice&query={SECRET}", None),
            ("GET", f"{p}/agent-memory/embedding-stats", None),
            ("DELETE", f"{p}/agent-memory/{m}", None),
            ("POST", f"{p}/agent-memory/{m}/re-embed", None),
            ("POST", f"{p}/agent-memory/bulk-re-embed", {"memory_ids": [m]}),
            ("GET", f"{p}/triggers", None),
            ("PUT", f"{p}/triggers/{t}", {"concept": "changed", "enabled": False}),
            ("PUT", f"{p}/triggers/t-orga", {"concept": "changed"}),
            ("POST", f"{p}/triggers/{t}/test", {"text": SECRET}),
            ("GET", f"{p}/triggers/{t}/fires", None),
            ("POST", f"{p}/triggers/{t}/re-embed-concept", None),
            ("DELETE", f"{p}/triggers/{t}", None),
            ("DELETE", f"{p}/triggers/t-orga", None),
            ("GET", f"{p}/triggers/branch-lifecycle", None),
            ("GET", f"{p}/branches", None),
            ("GET", f"{p}/branches/analytics", None),
            ("GET", f"{p}/branches/{b}", None),
            ("GET", f"{p}/branches/b-orga", None),
            ("GET", f"{p}/branches/{b}/diff", None),
            ("GET", f"{p}/branches/{b}/conflicts", None),
            ("GET", f"{p}/branches/{b}/cost", None),
            ("POST", f"{p}/branches/{b}/merge", {"strategy": "branch_wins"}),
            ("DELETE", f"{p}/branches/{b}", None),
            ("GET", f"{p}/agent-keys", None),
            ("GET", f"{p}/agent-keys/{k}", None),
            ("PUT", f"{p}/agent-keys/{k}", {"description": "taken"}),
            ("POST", f"{p}/agent-keys/{k}/rotate", {"grace_period_hours": 0}),
            ("DELETE", f"{p}/agent-keys/{k}", None),
            ("GET", f"{p}/agent-keys/{k}/usage", None),
            ("GET", f"{p}/agent-keys/{k}/branch-usage", None),
            ("GET", f"{p}/api-keys", None),
            ("GET", f"{p}/api-keys/{o}/usage", None),
            ("POST", f"{p}/api-keys/{o}/rotate", {"grace_period_hours": 0}),
            ("DELETE", f"{p}/api-keys/{o}", None),
        ]
    out += [
        ("POST", "/v1/organizations/orga/agent-memory",
         {"agent_id": "alice", "memory_type": "semantic", "content": "planted"}),
        ("POST", "/v1/organizations/orga/triggers", trigger),
        ("POST", "/v1/organizations/orga/triggers/branch-lifecycle", lifecycle),
        ("POST", "/v1/organizations/orga/branches", {"agent_id": "alice"}),
        ("POST", "/v1/organizations/orga/agent-keys", {"agent_name": "alice"}),
        ("POST", "/v1/organizations/orga/api-keys", {"role": "admin"}),
        ("GET", "/v1/cot/sessions?agent_id=alice", None),
        ("GET", f"/v1/cot/sessions/{s}/replay?agent_id=alice", None),
        ("GET", f"/v1/cot/sessions/{s}/verify?agent_id=alice", None),
        ("GET", f"/v1/cot/sessions/{s}/export?agent_id=alice", None),
        ("GET", "/v1/cot/verify", None),
        ("POST", "/v1/cot/approvals",
         {"session_id": s, "agent_id": "alice", "decision": "approve"}),
        ("POST", f"/v1/cot/sessions/{s}/merge-approval",
         {"branch_id": b, "decision": "approve"}),
        ("POST", "/v1/cot/ingest", {"traces": [{
            "trace_id": str(uuid.uuid4()), "session_id": s, "agent_id": "alice",
            "timestamp": "2026-01-01T00:00:00Z", "trace_type": "thought",
            "content": {"x": 1}, "org_id": "orga"}]}),
    ]  # fmt: skip
    return out


def test_org_admin_reaches_nothing_of_another_org_over_rest(world) -> None:
    ks, ids = world
    before = snapshot(ks, ids)
    leaks = []
    for method, path, body in rest_cases(ids):
        r = ks.request(method, path, "admb", json=body)
        text = r.text
        asked = path + json.dumps(body)  # an id the caller sent may be echoed back
        named = [str(v) for v in ids.values() if v != ids["session"] and str(v) not in asked]
        leaked = SECRET in text or any(v in text for v in named)
        aimed = "/organizations/orga" in path or any(
            str(v) in path for v in ids.values() if v != ids["session"]
        )
        if leaked or (aimed and r.status_code not in (403, 404)):
            leaks.append((method, path, r.status_code, text[:300]))
    assert leaks == [], "\n".join(map(str, leaks))
    unchanged(before, snapshot(ks, ids))  # nothing of orga's changed


def test_org_admin_reaches_nothing_of_another_org_over_mcp(world) -> None:
    ks, ids = world
    before = snapshot(ks, ids)
    cases = [
        ("search_memory", {"query": f"{SECRET} memory"}),
        ("delete_memory", {"memory_id": ids["memory_id"]}),
        ("get_agent_state", {"key": "plan"}),
        ("replay_decision", {"session_id": ids["session"], "verify_chain": True}),
        ("get_session_history", {"agent_id": "alice"}),
        ("verify_ledger", {}),
        ("log_reasoning_step", {"session_id": ids["session"], "content": "planted"}),
        ("list_triggers", {}),
        ("test_trigger", {"trigger_id": ids["trigger_id"], "content": SECRET}),
        ("delete_trigger", {"trigger_id": ids["trigger_id"]}),
        ("delete_trigger", {"trigger_id": "t-orga"}),
        ("branch_list", {}),
        ("branch_query", {"branch_id": ids["branch_id"], "sql": "SELECT 1"}),
        ("branch_query", {"branch_id": "b-orga", "sql": "SELECT 1"}),
        ("branch_merge", {"branch_id": ids["branch_id"]}),
        ("branch_discard", {"branch_id": ids["branch_id"]}),
        ("get_usage_stats", {}),
        ("read_query", {"sql": "SELECT content FROM _hatidata_agent_memory"}),
        ("query", {"sql": "SELECT value FROM _hatidata_agent_state"}),
        ("query", {"sql": "SELECT * FROM _hatidata_cot_traces"}),
        ("query", {"sql": "SELECT * FROM _hatidata_triggers"}),
    ]
    leaks = []
    for agent in (None, "alice"):
        for tool, args in cases:
            result = mcp(ks, "admb", tool, args, agent)
            text = json.dumps(result)
            asked = json.dumps(args)  # an id the caller sent may be echoed back
            named = [
                ids[x] for x in ("memory_id", "trigger_id", "branch_id") if ids[x] not in asked
            ]
            if SECRET in text or any(v in text for v in named):
                leaks.append((agent, tool, text[:300]))
            refused = tool.startswith(("delete_", "test_", "branch_")) and tool != "branch_list"
            if refused and not result.get("isError"):
                leaks.append((agent, tool, "succeeded: " + text[:300]))
    assert leaks == []
    unchanged(before, snapshot(ks, ids))
