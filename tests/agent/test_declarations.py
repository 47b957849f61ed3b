"""One declaration per agent function: a new @agent_function is, with no other edit, a
SQL table function (transpiler and bridge), an MCP tool with a generated, enforced JSON
schema (when declared with mcp=), and a row of the README's table."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import open_layer, run, who

from proxy.agent.all_functions import load_functions
from proxy.agent.docs import markdown_table
from proxy.api.http.schema import ToolError
from proxy.api.mcp.targets import LayerTarget
from proxy.api.mcp.tools import TOOLS, build_tools, run_tool
from proxy.core.identity import Identity
from proxy.core.registry import REGISTRY, McpTool, Param, Registry, agent_function
from proxy.execution.executor import execute_sql
from transpiler import agent_functions, transpile

NAME = "echo_words"


def declare(registry: Registry) -> None:
    """The dummy function: the only place it is written down."""

    @agent_function(
        NAME,
        params=[
            Param("text", "VARCHAR", description="Words to echo", nonempty=True),
            Param("times", "BIGINT", 2, "How often each word comes back", minimum=1, maximum=5),
            Param("tags", "JSON", None, "Labels (SQL only)", json_shape="array"),
        ],
        columns=[("n", "BIGINT"), ("word", "VARCHAR")],
        scope="memory:read",
        mcp=McpTool(("text", "times"), "Echo the words back."),
        registry=registry,
    )
    async def echo_words(
        layer: Any, who: Identity, *, text: str, times: int, tags: Any
    ) -> list[dict[str, Any]]:
        """Each word of text, times times over."""
        return [{"n": i, "word": w} for i in range(times) for w in text.split()]


@pytest.fixture
def registered() -> Iterator[None]:
    """The dummy in the server's REGISTRY for one test, then removed again."""
    load_functions()
    declare(REGISTRY)
    try:
        yield
    finally:
        REGISTRY.remove(NAME)


SQL = f"SELECT word, count(*) AS n FROM {NAME}('a b', times := 3) GROUP BY word ORDER BY word"


def test_sql_names_follow_the_registry_and_the_cache_does_not_go_stale() -> None:
    load_functions()
    (before,) = transpile(SQL)  # cached: a plain table function DuckDB would look for
    assert NAME not in agent_functions() and before.agent_calls == ()
    declare(REGISTRY)
    try:
        assert NAME in agent_functions() and agent_functions() == REGISTRY.names()
        (st,) = transpile(SQL)
        (call,) = st.agent_calls
        assert call.name == NAME and [a.value for a in call.args] == ["a b"]
        assert [(k, a.value) for k, a in call.kwargs] == [("times", 3)]
        # Lifted out: DuckDB reads the relation the server registers the rows under.
        assert f"FROM {call.relation} AS {NAME}" in st.sql
    finally:
        REGISTRY.remove(NAME)
    assert NAME not in agent_functions() and agent_functions() == REGISTRY.names()
    (after,) = transpile(SQL)
    assert after.agent_calls == () and after.sql == before.sql


def test_callable_from_sql_in_process(registered: None, tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            columns, rows = await execute_sql(layer, who(), SQL)
            assert columns == ["word", "n"] and rows == [("a", 3), ("b", 3)]

            # And as an MCP tool on the same layer (tools built from the live registry).
            tools = build_tools(REGISTRY)
            out = await run_tool(LayerTarget(layer, who()), NAME, {"text": "x y"}, tools)
            assert not out.get("isError"), out
            words = json.loads(out["content"][0]["text"])
            assert [r["word"] for r in words] == ["x", "y", "x", "y"]

    run(go())


def test_mcp_tool_schema_and_validation() -> None:
    registry = Registry()
    declare(registry)
    tools = build_tools(registry)
    assert list(tools)[-1] == NAME and NAME not in TOOLS  # the server's list is unchanged
    tool = tools[NAME]
    assert tool.definition() == {
        "name": NAME,
        "description": "Echo the words back.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {"description": "Words to echo", "type": "string", "pattern": r"\S"},
                "times": {
                    "description": "How often each word comes back",
                    "type": "integer",
                    "default": 2,
                    "minimum": 1,
                    "maximum": 5,
                },
            },
            "additionalProperties": False,
            "required": ["text"],
        },
    }
    assert tool.scope == "memory:read"
    assert tool.validate({"text": "a", "times": None}) == {"text": "a", "times": 2}
    assert tool.validate({"text": "a", "times": 4.0}) == {"text": "a", "times": 4}
    for bad, named in [
        ({}, "missing required argument 'text'"),
        ({"text": " "}, "text must not be empty"),
        ({"text": "a", "times": 9}, "times must be between 1 and 5"),
        ({"text": "a", "times": "2"}, "argument 'times' must be a JSON integer"),
        ({"text": "a", "tags": []}, "unknown argument(s) tags"),  # SQL only, not offered
    ]:
        with pytest.raises(ToolError) as err:
            tool.validate(bad)
        assert err.value.code == "invalid_argument" and named in err.value.message, bad

    class Recorder:
        def __init__(self) -> None:
            self.calls: list[tuple[str, dict[str, Any]]] = []

        def require(self, scope: str) -> None:
            pass

        def may_write_sql(self) -> bool:
            return True

        async def agent(self, function: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
            self.calls.append((function, kwargs))
            return [{"n": 0, "word": "a"}]

        async def sql(self, sql: str, *, read_only: bool = False) -> list[dict[str, Any]]:
            raise AssertionError("no SQL expected")

    target = Recorder()
    out = asyncio.run(run_tool(target, NAME, {"text": "a"}, tools))
    assert json.loads(out["content"][0]["text"]) == [{"n": 0, "word": "a"}]
    assert target.calls == [(NAME, {"text": "a", "times": 2})]
    bad = asyncio.run(run_tool(target, NAME, {"text": "a", "times": 0}, tools))
    assert bad["isError"] and "times" in bad["structuredContent"]["error"]


def test_in_the_docs_table() -> None:
    registry = Registry()
    declare(registry)
    table = markdown_table(registry)
    row = next(line for line in table.splitlines() if f"`{NAME}`" in line)
    assert f"`{NAME}`: Each word of text, times times over." in row
    assert "`text` VARCHAR: Words to echo" in row
    assert "`times` BIGINT = `2`: How often each word comes back; 1 to 5" in row
    assert "`tags` JSON array = `NULL`: Labels (SQL only)" in row
    assert "`n`, `word`" in row and "`memory:read`, MCP tool" in row


def test_a_declaration_must_be_complete() -> None:
    registry = Registry()
    with pytest.raises(ValueError, match="needs a one-line description"):
        agent_function(
            "undocumented", params=[Param("x", "VARCHAR")], columns=[], scope="s", registry=registry
        )(_handler)
    with pytest.raises(ValueError, match="is no parameter"):
        agent_function(
            "bad_tool",
            params=[Param("x", "VARCHAR", description="x")],
            columns=[],
            scope="s",
            mcp=McpTool(("y",)),
            registry=registry,
        )(_handler)
    assert not registry.functions


async def _handler(layer: Any, who: Identity, **kwargs: Any) -> list[dict[str, Any]]:
    """A handler."""
    return []
