"""Helpers for the MCP tests: JSON-RPC over HTTP (urllib, as a bare client) and stdio.

Import as `from mcp_support import ...` (pytest puts this folder on sys.path).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from itertools import count
from typing import Any

from tests.conftest import ROOT, ServerProcess, start_server

# The 23 tools and their required arguments, as COMPAT-HATIDATA.md lists them.
COMPAT_TOOLS: dict[str, set[str]] = {
    "query": {"sql"},
    "read_query": {"sql"},
    "list_schemas": set(),
    "list_tables": set(),
    "describe_table": {"table_name"},
    "get_usage_stats": set(),
    "store_memory": {"content"},
    "search_memory": {"query"},
    "get_agent_state": {"key"},
    "set_agent_state": {"key", "value"},
    "delete_memory": {"memory_id"},
    "log_reasoning_step": {"session_id", "content"},
    "replay_decision": {"session_id"},
    "get_session_history": set(),
    "register_trigger": {"name", "concept"},
    "list_triggers": set(),
    "delete_trigger": {"trigger_id"},
    "test_trigger": {"trigger_id", "content"},
    "branch_create": set(),
    "branch_query": {"branch_id", "sql"},
    "branch_merge": {"branch_id"},
    "branch_discard": {"branch_id"},
    "branch_list": set(),
}
# hatiproxy's own tools, beyond the public server's.
OWN_TOOLS: dict[str, set[str]] = {
    "verify_ledger": set(),
    "whoami": set(),
    "kg_add": {"entity_id", "entity_type"},
    "kg_query": {"entity_id"},
    "kg_delete": {"entity_id"},
    "create_session": {"app_name", "user_id"},
    "get_session": {"session_id"},
    "list_sessions": set(),
    "delete_session": {"session_id"},
    "append_event": {"session_id", "author"},
    "append_events": {"session_id", "events"},
    "session_events": {"session_id"},
    "working_memory": {"session_id"},
    "search_sessions": {"query"},
    "compact_session": {"session_id"},
    "save_artifact": {"session_id", "name", "data_base64"},
    "load_artifact": {"session_id", "name"},
    "store_memories": {"contents"},
    "process_memories": {"messages"},
}
ALL_TOOLS = {**COMPAT_TOOLS, **OWN_TOOLS}

_ids = count(1)


def start_mcp_server(tmp: Any, *args: str) -> ServerProcess:
    return start_server(tmp, "--database", ":memory:", "--embedding-provider", "hash", *args)


def http_post(
    url: str, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    """POST like the public client does (Accept */*, no session); (status, headers, JSON)."""
    import urllib.error
    import urllib.request

    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "*/*", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            status, head, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        status, head, raw = exc.code, dict(exc.headers), exc.read()
    head = {k.lower(): v for k, v in head.items()}
    return status, head, json.loads(raw) if raw else None


def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def tool_call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return rpc("tools/call", {"name": name, "arguments": arguments or {}})


def result_data(result: dict[str, Any]) -> Any:
    """The JSON inside a successful tool result."""
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


def error_text(result: dict[str, Any]) -> str:
    assert result.get("isError") is True, result
    return result["content"][0]["text"]


class HttpAgent:
    """One agent identity talking to the server's /mcp endpoint."""

    def __init__(self, server: ServerProcess, agent_id: str | None = None, **headers: str):
        self.url = server.mcp_url
        self.headers = dict(headers)
        if agent_id:
            self.headers["X-Hatidata-Agent-Id"] = agent_id

    def send(self, message: Any) -> tuple[int, dict[str, str], Any]:
        return http_post(self.url, message, self.headers)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        status, _, body = self.send(tool_call(name, arguments))
        assert status == 200, (status, body)
        return body["result"]

    def data(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return result_data(self.call(name, arguments))


class StdioAgent:
    """`python -m proxy mcp` driven line by line over its stdin / stdout."""

    def __init__(self, server: ServerProcess, agent_id: str | None, *extra: str) -> None:
        cmd = [sys.executable, "-m", "proxy", "mcp", "--port", str(server.port)]
        cmd += ["--host", server.host, *extra]
        if agent_id is not None:  # None: the server's rule decides (key's or default agent)
            cmd += ["--agent-id", agent_id]
        self.proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self._sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        self._buf = b""

    def write_line(self, raw: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((raw.encode() if isinstance(raw, str) else raw) + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write_line(json.dumps(message))

    def read(self, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not self._sel.select(left):
                raise TimeoutError(f"no answer from hatiproxy mcp; stderr: {self.stderr()}")
            chunk = os.read(self.proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                raise EOFError(f"hatiproxy mcp exited; stderr: {self.stderr()}")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(message)
        answer = self.read()
        assert answer.get("id") == message["id"], answer
        return answer

    def initialize(self) -> dict[str, Any]:
        answer = self.request(
            rpc(
                "initialize",
                {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "clientInfo": {"name": "hatiproxy-tests", "version": "1"},
                },
            )
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.request(tool_call(name, arguments))["result"]

    def data(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return result_data(self.call(name, arguments))

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        return (self.proc.stderr.read() or b"").decode(errors="replace")  # type: ignore[union-attr]

    def close(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()  # EOF: the server exits on its own
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self._sel.close()

    def __enter__(self) -> StdioAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
