"""The 24 MCP tools: names, input schemas, and one dispatcher for every transport.

Names, argument names, defaults and result shapes follow the public HatiData MCP
server (see ../shared/COMPAT-HATIDATA.md), so its client configs work unchanged; one
tool is hatiproxy's own (`verify_ledger`).
Transports (stdio: `proxy.api.mcp.stdio`, HTTP: `proxy.api.mcp.http`) only move JSON-RPC;
`call_tool` does the work through a `Target` (`proxy.api.mcp.targets`): in-process
on the agent layer, or over the Postgres wire to a running hatiproxy.

The tool list is generated (`build_tools`): the SQL tools (`proxy.api.mcp.sql`) and
every agent function declared with `mcp=McpTool(...)` (`proxy.agent.*`), a tool of the
function's name, scope and declared parameters. Schemas and argument checks:
`proxy.api.http.schema`. Only the result shapes of the public tools are written here.
"""

from __future__ import annotations

import json
from typing import Any

from proxy.agent.all_functions import in_order, load_functions
from proxy.agent.ledger.verify import ledger_document
from proxy.api.http.schema import Target, Tool, ToolError
from proxy.api.mcp.sql import SQL_TOOLS
from proxy.core.errors import AgentError
from proxy.core.registry import Registry
from proxy.wire.errors import PgError

__all__ = [
    "TOOLS",
    "Target",
    "Json",
    "Tool",
    "ToolError",
    "build_tools",
    "call_tool",
    "run_tool",
    "tool_definitions",
    "validate",
]


class Json:
    """A JSON-typed agent argument: the in-process target passes the value, the wire
    target sends JSON text (a bare string must arrive as '"text"', not as text)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


# ---------------------------------------------------------------- definitions


def build_tools(registry: Registry) -> dict[str, Tool]:
    """The SQL tools, then the registry's MCP-offered agent functions (docs order)."""
    tools = {t.name: t for t in SQL_TOOLS}
    for fn in in_order(registry):
        if fn.mcp is not None:
            tools[fn.name] = Tool(fn.name, fn.tool_description, fn.scope, fn.tool_params())
    return tools


# Built once, at import: the server's tool list is fixed from its start.
TOOLS: dict[str, Tool] = build_tools(load_functions())


def tool_definitions(tools: dict[str, Tool] | None = None) -> list[dict[str, Any]]:
    return [t.definition() for t in (TOOLS if tools is None else tools).values()]


def validate(tool: Tool, arguments: Any) -> dict[str, Any]:
    """Check arguments against the tool's schema; the result carries the schema defaults."""
    return tool.validate(arguments)


# ---------------------------------------------------------------- dispatch


async def _agent(target: Target, tool: Tool, args: dict[str, Any]) -> list[dict[str, Any]]:
    # Every tool argument is passed on under its own name; nulls are dropped except
    # where the parameter takes any JSON value (set_agent_state(value=null) is a value).
    types = {p.name: p for p in tool.params}
    kwargs = {
        name: Json(value) if types[name].type == "JSON" else value
        for name, value in args.items()
        if value is not None or (types[name].type == "JSON" and types[name].json_shape is None)
    }
    return await target.agent(tool.name, kwargs)


def _one(rows: list[dict[str, Any]], what: str) -> dict[str, Any]:
    if not rows:
        raise AgentError.not_found(f"{what} not found")
    return rows[0]


async def call_tool(
    target: Target, name: str, arguments: Any, tools: dict[str, Tool] | None = None
) -> dict[str, Any] | list[Any]:
    """Run one tool call; returns the COMPAT result shape, raises on failure."""
    tool = (TOOLS if tools is None else tools).get(name)
    if tool is None:
        raise ToolError(f"unknown tool {name!r}", code="unknown_tool")
    args = tool.validate(arguments)
    target.require(tool.scope)
    if tool.run is not None:
        return await tool.run(target, args)
    if name == "replay_decision":  # each step row carries chain_valid when verified
        steps = await _agent(target, tool, args)
        valid = steps[0].get("chain_valid") if steps and args["verify_chain"] else None
        return {
            "session_id": args["session_id"],
            "steps": steps,
            "step_count": len(steps),
            "chain_valid": valid,
        }
    rows = await _agent(target, tool, args)
    return _SHAPES.get(name, lambda a, r: r)(args, rows)


def _state(args: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    row = rows[0] if rows else {}
    return {**row, "key": args["key"], "value": row.get("value")}


def _test(args: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    row = _one(rows, f"trigger {args['trigger_id']}")
    matched = row.get("matched", row.get("would_fire"))
    score = row.get("score", row.get("similarity"))
    return {
        **row,
        "matched": bool(matched),
        "score": score,
        "threshold": row.get("threshold"),
        "trigger_name": row.get("trigger_name", row.get("name")),
    }


def _flag(flag: str, id_arg: str):
    def shape(args: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
        # The id the row names (the argument may have been a name): the argument only
        # when the row has none.
        row = rows[0] if rows else {}
        ident = row.get(id_arg) or args[id_arg]
        return {**row, flag: bool(row.get(flag, bool(rows))), id_arg: str(ident)}

    return shape


def _branch_rows(args: dict[str, Any], rows: list[dict[str, Any]]) -> list[Any]:
    # branch_query's rows arrive as one JSON object each ("row"); over the wire maybe as text.
    out = [r.get("row") for r in rows]
    return [json.loads(v) if isinstance(v, str) else v for v in out]


_SHAPES = {
    "branch_query": _branch_rows,
    "store_memory": lambda a, r: _one(r, "stored memory"),
    "get_agent_state": _state,
    "set_agent_state": lambda a, r: {**(r[0] if r else {}), "key": a["key"], "status": "ok"},
    "delete_memory": _flag("deleted", "memory_id"),
    "log_reasoning_step": lambda a, r: {**_one(r, "step"), "session_id": a["session_id"]},
    "verify_ledger": lambda a, r: ledger_document(r),
    "register_trigger": lambda a, r: _one(r, "trigger"),
    "delete_trigger": _flag("deleted", "trigger_id"),
    "test_trigger": _test,
    "branch_create": lambda a, r: _one(r, "branch"),
    "branch_merge": lambda a, r: _one(r, f"branch {a['branch_id']}"),
    "branch_discard": _flag("discarded", "branch_id"),
}


# ---------------------------------------------------------------- results


def ok_result(data: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(data, default=str)}]}


def error_result(exc: BaseException) -> dict[str, Any]:
    """An MCP error result: the message, with the SQLSTATE / error code when known."""
    info: dict[str, Any]
    if isinstance(exc, AgentError):
        info = {"error": exc.message, "code": exc.code, "sqlstate": exc.sqlstate}
    elif isinstance(exc, ToolError):
        info = {"error": exc.message, "code": exc.code}
    elif isinstance(exc, PgError):
        info = {"error": exc.message, "sqlstate": exc.sqlstate}
    elif _is_psycopg(exc):  # stdio talks over the wire: the server's error, as it sent it
        diag = getattr(exc, "diag", None)
        info = {"error": getattr(diag, "message_primary", None) or str(exc).strip()}
        if getattr(exc, "sqlstate", None):
            info["sqlstate"] = exc.sqlstate  # type: ignore[attr-defined]
    else:  # unforeseen: named as such (the server log has the traceback)
        info = {"error": f"internal error: {type(exc).__name__}: {exc}", "code": "internal"}
    hint = getattr(exc, "hint", None) or getattr(getattr(exc, "diag", None), "message_hint", None)
    if hint:
        info["hint"] = hint
    text = info["error"]
    if "sqlstate" in info or "code" in info:
        tags = [f"SQLSTATE {info['sqlstate']}"] if "sqlstate" in info else []
        text += f" ({', '.join(tags + ([info['code']] if 'code' in info else []))})"
    if hint:
        text += f"\nHINT: {hint}"
    return {"content": [{"type": "text", "text": text}], "isError": True, "structuredContent": info}


def _is_psycopg(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("psycopg")


async def run_tool(
    target: Target, name: str, arguments: Any, tools: dict[str, Tool] | None = None
) -> dict[str, Any]:
    """call_tool wrapped as an MCP CallToolResult dict; every failure is an error result."""
    try:
        return ok_result(await call_tool(target, name, arguments, tools))
    except Exception as exc:  # an error result, whatever broke: the client must get an answer
        if not isinstance(exc, AgentError | ToolError | PgError) and not _is_psycopg(exc):
            import logging

            logging.getLogger("hatiproxy.mcp").exception("MCP tool %s failed", name)
        return error_result(exc)
