"""`hatiproxy mcp` (stdio) against a real server: line-by-line JSON-RPC and the official client."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator

import anyio
import pytest
from mcp_support import ALL_TOOLS, StdioAgent, error_text, rpc, start_mcp_server

from tests.conftest import ROOT, ServerProcess


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_mcp_server(tmp_path_factory.mktemp("mcp_stdio"))
    yield server
    server.stop()


def test_line_protocol(srv: ServerProcess) -> None:
    with StdioAgent(srv, "s-a1") as agent:
        init = agent.initialize()["result"]
        assert init["serverInfo"]["name"] == "hatiproxy" and "tools" in init["capabilities"]
        tools = agent.request(rpc("tools/list"))["result"]["tools"]
        assert {t["name"] for t in tools} == set(ALL_TOOLS)
        assert agent.data("query", {"sql": "SELECT 'hi' AS greeting"}) == [{"greeting": "hi"}]
        agent.write_line("{this is not json")
        answer = agent.read()
        assert answer["id"] is None and answer["error"]["code"] == -32700
        assert "unknown tool" in error_text(agent.call("nope"))
        assert "missing required argument" in error_text(agent.call("describe_table"))
        refused = agent.call("read_query", {"sql": "INSERT INTO t VALUES (1)"})
        assert "25006" in error_text(refused)
        refused = agent.call("read_query", {"sql": "SELECT * FROM store_memory('sneaky')"})
        assert "25006" in error_text(refused)
        # still serving after all that
        assert agent.data("query", {"sql": "SELECT 2 AS n"}) == [{"n": 2}]


def test_memory_isolation_between_agents(srv: ServerProcess) -> None:
    text = f"the launch code word is {uuid.uuid4().hex[:6]} pelican"
    with StdioAgent(srv, "s-m1") as a1, StdioAgent(srv, "s-m2") as a2:
        a1.initialize()
        a2.initialize()
        memory_id = a1.data("store_memory", {"content": text, "metadata": {"src": "test"}})[
            "memory_id"
        ]
        hits = a1.data("search_memory", {"query": "launch code word pelican"})
        assert any(h["memory_id"] == memory_id for h in hits)
        others = a2.data("search_memory", {"query": "launch code word pelican"})
        assert not any(h["memory_id"] == memory_id for h in others)
        denied = a2.call("delete_memory", {"memory_id": memory_id})
        assert denied.get("isError") or '"deleted": false' in denied["content"][0]["text"]
        assert any(
            h["memory_id"] == memory_id for h in a1.data("search_memory", {"query": "pelican"})
        )


def test_state_over_stdio(srv: ServerProcess) -> None:
    with StdioAgent(srv, "s-st1") as a1, StdioAgent(srv, "s-st2") as a2:
        a1.initialize()
        a2.initialize()
        a1.data("set_agent_state", {"key": "mood", "value": "curious"})
        a1.data("set_agent_state", {"key": "cfg", "value": {"depth": 2, "tags": ["a"]}})
        assert a1.data("get_agent_state", {"key": "mood"})["value"] == "curious"
        assert a1.data("get_agent_state", {"key": "cfg"})["value"] == {"depth": 2, "tags": ["a"]}
        assert a2.data("get_agent_state", {"key": "mood"})["value"] is None


def test_official_mcp_client(srv: ServerProcess) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    args = ["-m", "proxy", "mcp", "--host", srv.host, "--port", str(srv.port)]
    params = StdioServerParameters(
        command=sys.executable, args=[*args, "--agent-id", "s-c1"], cwd=str(ROOT)
    )

    async def scenario() -> None:
        async with Client(params) as client:
            tools = await client.list_tools()
            assert len(tools.tools) == len(ALL_TOOLS)
            result = await client.call_tool("query", {"sql": "SELECT 7 AS seven"})
            assert not result.is_error
            assert result.content[0].text == '[{"seven": 7}]'
            bad = await client.call_tool("store_memory", {})
            assert bad.is_error

    anyio.run(scenario)


def test_branch_over_stdio(srv: ServerProcess) -> None:
    with StdioAgent(srv, "s-b1") as agent:
        agent.initialize()
        agent.data("query", {"sql": "CREATE TABLE sb_items (id INTEGER)"})
        bid = agent.data("branch_create", {"name": "stdio"})["branch_id"]
        agent.data("branch_query", {"branch_id": bid, "sql": "INSERT INTO sb_items VALUES (5)"})
        rows = agent.data("branch_query", {"branch_id": bid, "sql": "SELECT * FROM sb_items"})
        assert rows == [{"id": 5}]
        assert agent.data("read_query", {"sql": "SELECT count(*) AS n FROM sb_items"}) == [{"n": 0}]
        assert agent.data("branch_discard", {"branch_id": bid})["discarded"] is True
        # By name, too (stdio runs the SQL functions over the wire).
        named = agent.data("branch_create", {"name": "stdio-named"})["branch_id"]
        rows = agent.data("branch_query", {"branch_id": "stdio-named", "sql": "SELECT 1 AS one"})
        assert rows == [{"one": 1}]
        dropped = agent.data("branch_discard", {"branch_id": "stdio-named"})
        assert dropped["branch_id"] == named and dropped["discarded"] is True


def test_password_from_environment(tmp_path_factory: pytest.TempPathFactory) -> None:
    import os

    keyed = start_mcp_server(tmp_path_factory.mktemp("mcp_stdio_keys"), "--users", "agent:k-77")
    try:
        os.environ["HATIDATA_API_KEY"] = "k-77"
        try:
            with StdioAgent(keyed, "s-k1") as agent:
                agent.initialize()
                assert agent.data("query", {"sql": "SELECT 1 AS one"}) == [{"one": 1}]
        finally:
            del os.environ["HATIDATA_API_KEY"]
        with StdioAgent(keyed, "s-k2", "--password", "wrong") as agent:
            error = agent.initialize()["error"]  # refused at initialize, not at every call
            assert "password authentication failed" in error["message"], error
            assert "--api-key" in error["message"]
            assert "error" in agent.request(rpc("tools/list"))
    finally:
        keyed.stop()


def test_api_key_by_flag_config_file_or_refused_at_initialize(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With API keys on, the key comes from --api-key or --config; a wrong one fails
    initialize with the server's message (the MCP client shows it)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.shared.exceptions import MCPError

    from tests.rest.rest_support import KeySpec, keyed_server

    tmp = tmp_path_factory.mktemp("mcp_stdio_api_keys")
    keyed = keyed_server(tmp, {"bot": KeySpec("agent", agent_id="bot")})
    secret = keyed.secrets["bot"]
    srv = keyed.server
    config = tmp / "mcp.toml"
    config.write_text(f'host = "{srv.host}"\nport = {srv.port}\napi_key = "{secret}"\n')
    env = {k: v for k, v in os.environ.items() if k != "HATIDATA_API_KEY"}

    def params(*extra: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable,
            args=["-m", "proxy", "mcp", "--agent-id", "bot", *extra],
            cwd=str(ROOT),
            env=env,
        )

    by_flag = params("--host", srv.host, "--port", str(srv.port), "--api-key", secret)
    wrong = params("--config", str(config), "--api-key", "hd_live_not_a_real_key")
    missing = params("--host", srv.host, "--port", str(srv.port))

    async def works(p: StdioServerParameters) -> None:
        async with Client(p) as client:
            result = await client.call_tool("query", {"sql": "SELECT 41 + 1 AS n"})
            assert not result.is_error, result
            assert result.content[0].text == '[{"n": 42}]'

    async def refused(p: StdioServerParameters, words: str) -> None:
        with pytest.raises(BaseException) as info:  # noqa: PT011 (an ExceptionGroup, maybe)
            async with Client(p):
                pass
        errors = [info.value]
        while isinstance(errors[-1], BaseExceptionGroup):
            errors.append(errors[-1].exceptions[0])
        assert isinstance(errors[-1], MCPError), info.value
        message = str(errors[-1])
        assert words in message and "refused the login" in message, message
        assert "connection to server" not in message  # the reason, not libpq's preamble

    async def scenario() -> None:
        await works(by_flag)
        await works(params("--config", str(config)))
        await refused(wrong, "password authentication failed")
        await refused(missing, "no password supplied")

    try:
        anyio.run(scenario)
    finally:
        srv.stop()
