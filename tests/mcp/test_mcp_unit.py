"""MCP pieces without a server: schemas, argument checks, tool -> function mapping, auth."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from mcp_support import ALL_TOOLS

from proxy.api.mcp.http import AuthLayer
from proxy.api.mcp.tools import TOOLS, Json, ToolError, run_tool, tool_definitions, validate
from proxy.core.errors import AgentError
from proxy.core.identity import Identity


class FakeTarget:
    """Records agent calls; answers with canned rows."""

    def __init__(self, rows: list[dict[str, Any]] | None = None, scopes: set[str] | None = None):
        self.rows = rows if rows is not None else [{"ok": True}]
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.who = Identity("o", "a", scopes=frozenset(scopes) if scopes is not None else None)

    def require(self, scope: str) -> None:
        self.who.require(scope)

    def may_write_sql(self) -> bool:
        return True

    async def agent(self, function: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        self.calls.append((function, kwargs))
        return self.rows

    async def sql(self, sql: str, *, read_only: bool = False) -> list[dict[str, Any]]:
        self.calls.append(("sql", {"sql": sql, "read_only": read_only}))
        return self.rows


def run(target: FakeTarget, name: str, args: Any) -> dict[str, Any]:
    return asyncio.run(run_tool(target, name, args))


def test_definitions_match_compat() -> None:
    defs = {d["name"]: d for d in tool_definitions()}
    assert set(defs) == set(ALL_TOOLS) and len(defs) == 42
    for name, required in ALL_TOOLS.items():
        assert set(defs[name]["inputSchema"].get("required", [])) == required
        assert defs[name]["description"]
    steps = defs["log_reasoning_step"]["inputSchema"]["properties"]["step_type"]
    assert steps["default"] == "observation" and len(steps["enum"]) == 12
    merge = defs["branch_merge"]["inputSchema"]["properties"]["strategy"]
    assert merge["default"] == "branch_wins" and set(merge["enum"]) == {"branch_wins", "main_wins"}


def test_validate_defaults_and_types() -> None:
    args = validate(TOOLS["store_memory"], {"content": "x", "metadata": None})
    assert args == {"content": "x", "memory_type": "fact", "importance": 0.5}
    assert validate(TOOLS["search_memory"], {"query": "q", "top_k": 3.0})["top_k"] == 3
    assert validate(TOOLS["set_agent_state"], {"key": "k", "value": None})["value"] is None
    for tool, bad in [
        ("store_memory", {}),
        ("store_memory", {"content": "  "}),
        ("store_memory", {"content": "x", "importance": 1.5}),
        ("store_memory", {"content": "x", "metadata": "not an object"}),
        ("search_memory", {"query": "q", "top_k": 0}),
        ("search_memory", {"query": "q", "top_k": True}),
        ("set_agent_state", {"key": "k"}),
        ("replay_decision", {"session_id": "s", "verify_chain": "yes"}),
        ("query", {"sql": "SELECT 1", "extra": 1}),
        ("query", ["SELECT 1"]),
    ]:
        with pytest.raises(ToolError):
            validate(TOOLS[tool], bad)


def test_agent_mapping_and_shapes() -> None:
    target = FakeTarget([{"memory_id": "m1", "deduplicated": False}])
    out = run(target, "store_memory", {"content": "hello", "metadata": {"a": 1}})
    assert json.loads(out["content"][0]["text"])["memory_id"] == "m1"
    fn, kwargs = target.calls[0]
    assert fn == "store_memory" and kwargs["content"] == "hello" and kwargs["importance"] == 0.5
    assert isinstance(kwargs["metadata"], Json) and kwargs["metadata"].value == {"a": 1}

    target = FakeTarget([])
    state = json.loads(run(target, "get_agent_state", {"key": "k"})["content"][0]["text"])
    assert state == {"key": "k", "value": None}

    target = FakeTarget([{"trace_id": "t", "step_index": 0, "chain_valid": True}])
    replay = json.loads(
        run(target, "replay_decision", {"session_id": "s", "verify_chain": True})["content"][0][
            "text"
        ]
    )
    assert replay["step_count"] == 1 and replay["chain_valid"] is True

    target = FakeTarget([{"trigger_id": "t", "deleted": True}])
    deleted = json.loads(run(target, "delete_trigger", {"trigger_id": "t"})["content"][0]["text"])
    assert deleted["deleted"] is True and deleted["trigger_id"] == "t"


def test_errors_are_results() -> None:
    class Failing(FakeTarget):
        async def agent(self, function: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
            raise AgentError.not_found("memory m9 not found")

    out = run(Failing(), "delete_memory", {"memory_id": "m9"})
    assert out["isError"] is True
    assert out["structuredContent"] == {
        "error": "memory m9 not found",
        "code": "not_found",
        "sqlstate": "42704",
    }
    assert "42704" in out["content"][0]["text"]
    assert run(FakeTarget(), "nope", {})["isError"] is True


def test_scopes_refuse_in_process() -> None:
    target = FakeTarget(scopes={"memory:read"})
    out = run(target, "store_memory", {"content": "x"})
    assert out["isError"] and out["structuredContent"]["code"] == "forbidden"
    assert not target.calls
    assert not run(target, "search_memory", {"query": "x"}).get("isError")


class StaticAccess:
    """Stands in for AccessControl: every caller is one fixed (read-only) identity."""

    def __init__(self, who: Identity) -> None:
        self.who = who

    async def identity_from_header(self, headers: Any, host: Any) -> Identity:
        return self.who


def test_http_scope_check_is_403_before_the_tool_runs() -> None:
    seen: list[dict] = []

    async def inner(scope: dict, receive: Any, send: Any) -> None:
        seen.append(scope)

    async def call(body: dict) -> tuple[int, dict]:
        who = Identity("o", "a", scopes=frozenset({"memory:read"}))
        app = AuthLayer(inner, StaticAccess(who))
        sent: list[dict] = []
        chunks = [{"type": "http.request", "body": json.dumps(body).encode()}]

        async def receive() -> dict:
            return chunks.pop(0)

        async def send(message: dict) -> None:
            sent.append(message)

        headers = [(b"content-type", b"application/json")]
        scope = {"type": "http", "method": "POST", "headers": headers, "client": ("127.0.0.1", 1)}
        await app(scope, receive, send)
        if not sent:
            return 0, {}
        return sent[0]["status"], json.loads(sent[1]["body"])

    def tools_call(rid: int, name: str) -> dict:
        return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}}

    status, body = asyncio.run(call(tools_call(5, "store_memory")))
    assert status == 403 and body["id"] == 5 and body["error"]["data"]["code"] == "forbidden"
    assert not seen
    status, _ = asyncio.run(call(tools_call(6, "search_memory")))
    assert status == 0 and seen and seen[0]["hatiproxy.identity"].agent_id == "a"
