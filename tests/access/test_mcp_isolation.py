"""Every MCP tool, called with another organisation's or another agent's key, on the
objects of org one's agent: nothing of theirs is read, changed or revealed."""

from __future__ import annotations

import json

import pytest
import requests

from tests.rest.rest_support import KeySpec, keyed_server

SPECS = {
    "owner": KeySpec("agent", agent_id="alice"),
    "peer": KeySpec("agent", agent_id="bob"),  # same org, another agent
    "outsider": KeySpec("admin", org_id="org2"),  # another org's admin
}


def call(url: str, key: str, tool: str, args: dict, agent: str | None = None) -> tuple[int, dict]:
    headers = {"Authorization": f"ApiKey {key}"}
    if agent:
        headers["X-Hatidata-Agent-Id"] = agent
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": tool, "arguments": args}
    r = requests.post(url, json=body, headers=headers, timeout=30)
    return r.status_code, r.json()


def payload(answer: dict) -> tuple[bool, str]:
    result = answer.get("result", {})
    return bool(result.get("isError")), result.get("content", [{}])[0].get("text", "")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    ks = keyed_server(tmp_path_factory.mktemp("iso"), SPECS)
    url, key = ks.server.mcp_url, ks.secrets["owner"]

    def owner(tool: str, args: dict) -> dict:
        status, answer = call(url, key, tool, args)
        failed, text = payload(answer)
        assert status == 200 and not failed, text
        return json.loads(text)

    ids = {
        "memory_id": owner("store_memory", {"content": "alice's private salary notes"})[
            "memory_id"
        ],
        "trigger_id": owner("register_trigger", {"name": "t", "concept": "salary"})["trigger_id"],
        "branch_id": owner("branch_create", {"name": "b"})["branch_id"],
    }
    owner("set_agent_state", {"key": "plan", "value": {"secret": "alice-plan"}})
    owner("log_reasoning_step", {"session_id": "s-alice", "content": "alice thinks privately"})
    yield ks, ids
    ks.server.stop()


# What each tool is asked, naming org one's objects.
def cases(ids: dict) -> list[tuple[str, dict]]:
    return [
        ("search_memory", {"query": "salary notes"}),
        ("delete_memory", {"memory_id": ids["memory_id"]}),
        ("get_agent_state", {"key": "plan"}),
        ("replay_decision", {"session_id": "s-alice"}),
        ("get_session_history", {}),
        ("list_triggers", {}),
        ("test_trigger", {"trigger_id": ids["trigger_id"], "content": "salary"}),
        ("delete_trigger", {"trigger_id": ids["trigger_id"]}),
        ("branch_list", {}),
        ("branch_query", {"branch_id": ids["branch_id"], "sql": "SELECT 1"}),
        ("branch_merge", {"branch_id": ids["branch_id"]}),
        ("branch_discard", {"branch_id": ids["branch_id"]}),
        ("read_query", {"sql": "SELECT content FROM _hatidata_agent_memory"}),
        ("query", {"sql": "SELECT value FROM _hatidata_agent_state"}),
    ]


SECRETS = ("salary notes", "alice-plan", "alice thinks", '"t"')


@pytest.mark.parametrize("intruder,agent", [("peer", None), ("outsider", "alice")])
def test_no_tool_reaches_another_owner(world, intruder: str, agent: str | None) -> None:
    ks, ids = world
    url, key = ks.server.mcp_url, ks.secrets[intruder]
    for tool, args in cases(ids):
        status, answer = call(url, key, tool, args, agent)
        failed, text = payload(answer)
        assert status == 200, (tool, answer)
        for secret in SECRETS:
            assert secret not in text, (tool, text)
        if (
            tool in ("delete_memory", "delete_trigger", "test_trigger")
            or tool.startswith("branch_")
            and tool != "branch_list"
        ):
            assert failed and ("not found" in text or "42704" in text), (tool, text)
    # And everything is still there for its owner.
    status, answer = call(url, ks.secrets["owner"], "search_memory", {"query": "salary notes"})
    assert "salary notes" in payload(answer)[1]
    status, answer = call(url, ks.secrets["owner"], "list_triggers", {})
    assert ids["trigger_id"] in payload(answer)[1]
