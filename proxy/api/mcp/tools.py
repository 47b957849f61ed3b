"""The 23 MCP tools: names, input schemas, and one dispatcher for every transport.

Names, argument names, defaults and result shapes follow the public HatiData MCP
server (see ../shared/COMPAT-HATIDATA.md), so its client configs work unchanged.
Transports (stdio: `proxy.api.mcp.stdio`, HTTP: `proxy.api.mcp.http`) only move JSON-RPC;
`call_tool` does the work through a `Backend` (`proxy.api.mcp.targets`): in-process
on the agent layer, or over the Postgres wire to a running hatiproxy.

Agent tools map onto the agent layer's registered functions (`proxy.agent.*`); the
tool -> function mapping is one small table, `AGENT_TOOLS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from proxy.core.errors import AgentError
from proxy.wire.errors import PgError

STEP_TYPES = (
    "observation", "hypothesis", "analysis", "decision", "action", "reflection",
    "planning", "evaluation", "retrieval", "synthesis", "delegation", "error",
)  # fmt: skip
TRIGGER_ACTIONS = ("flag_for_review", "webhook", "agent_notify", "write_event")


class Json:
    """A JSON-typed agent argument: the in-process backend passes the value, the wire
    backend sends JSON text (a bare string must arrive as '"text"', not as text)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Backend(Protocol):
    """Where tools run. Scope checks happen here (the wire server checks its own)."""

    def require(self, scope: str) -> None: ...

    def may_write_sql(self) -> bool: ...

    async def agent(self, function: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]: ...

    async def sql(self, sql: str, *, read_only: bool = False) -> list[dict[str, Any]]: ...


class ToolError(Exception):
    """A bad call (unknown tool, invalid arguments): an error result, never a crash."""

    def __init__(self, message: str, code: str = "invalid_argument") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# ---------------------------------------------------------------- definitions


def _p(type_: str | None, description: str, default: Any = None, **extra: Any) -> dict[str, Any]:
    prop: dict[str, Any] = {"description": description, **extra}
    if type_ is not None:  # set_agent_state.value takes any JSON value
        prop["type"] = type_
    if default is not None:
        prop["default"] = default
    return prop


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...]
    scope: str  # checked before the tool runs (HTTP answers 403 without it)

    def definition(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = list(self.required)
        return {"name": self.name, "description": self.description, "inputSchema": schema}


def _tool(name: str, scope: str, description: str, /, *required: str, **props: dict) -> Tool:
    return Tool(name, description, props, required, scope)


_SQL = _p("string", "SQL to run (Postgres, DuckDB or Snowflake dialect)")
_STATUS = "Filter by status"
TOOLS: dict[str, Tool] = {
    t.name: t
    for t in [
        # SQL
        _tool("query", "query:read", "Run SQL and return the rows as a JSON array of objects. "
              "Writes need the query:write scope.", "sql", sql=_SQL),
        _tool("read_query", "query:read", "Run read-only SQL (SELECT, SHOW, EXPLAIN); anything "
              "that would write is refused.", "sql", sql=_p("string", "A read-only SQL query")),
        _tool("list_schemas", "query:read", "List the schemas in the database."),
        _tool("list_tables", "query:read", "List tables and views, optionally of one schema.",
              schema=_p("string", "Only this schema (default: all)")),
        _tool("describe_table", "query:read", "Columns of a table: name, type, nullability.",
              "table_name", table_name=_p("string", "Table name, optionally schema.table")),
        _tool("get_usage_stats", "query:read", "Estimated row counts and column counts of all "
              "tables."),
        # memory and state
        _tool("store_memory", "memory:write", "Store a memory in this agent's long-term memory; "
              "returns its memory_id.", "content",
              content=_p("string", "The memory text"),
              memory_type=_p("string", "fact, observation, instruction, preference or episode",
                             "fact"),
              metadata=_p("object", "Key-value metadata"),
              importance=_p("number", "Importance 0.0-1.0", 0.5, minimum=0, maximum=1)),
        _tool("search_memory", "memory:read", "Find this agent's memories by meaning and "
              "keywords, best first.", "query",
              query=_p("string", "What to look for"),
              top_k=_p("integer", "Most results to return", 10, minimum=1),
              memory_type=_p("string", "Only memories of this type"),
              min_importance=_p("number", "Only memories at least this important")),
        _tool("get_agent_state", "memory:read", "Read one of this agent's state values.", "key",
              key=_p("string", "State key")),
        _tool("set_agent_state", "memory:write", "Set one of this agent's state values (any JSON "
              "value).", "key", "value",
              key=_p("string", "State key"), value=_p(None, "The value (any JSON type)")),
        _tool("delete_memory", "memory:write", "Delete one of this agent's memories.",
              "memory_id", memory_id=_p("string", "The memory's UUID")),
        # chain-of-thought ledger
        _tool("log_reasoning_step", "cot:write", "Append a step to a reasoning session's "
              "hash-chained ledger. Step types: " + ", ".join(STEP_TYPES) + ".",
              "session_id", "content",
              session_id=_p("string", "Reasoning session id"),
              step_type=_p("string", "Kind of step", "observation", enum=list(STEP_TYPES)),
              content=_p("string", "The step's text"),
              metadata=_p("object", "Key-value metadata"),
              importance=_p("number", "Importance 0.0-1.0", 0.5, minimum=0, maximum=1)),
        _tool("replay_decision", "cot:read", "All steps of a reasoning session in order, "
              "optionally with the hash chain verified.", "session_id",
              session_id=_p("string", "Session to replay"),
              verify_chain=_p("boolean", "Verify the SHA-256 hash chain", False)),
        _tool("get_session_history", "cot:read", "Recent reasoning sessions with step counts.",
              limit=_p("integer", "Most sessions to return", 50, minimum=1),
              agent_id=_p("string", "Only this agent's sessions"),
              since=_p("string", "Only sessions active since this ISO 8601 timestamp")),
        # semantic triggers
        _tool("register_trigger", "trigger:write", "Watch for content that matches a concept; "
              "actions: " + ", ".join(TRIGGER_ACTIONS) + ".", "name", "concept",
              name=_p("string", "Trigger name"), concept=_p("string", "The concept to watch for"),
              threshold=_p("number", "Cosine similarity needed to fire", 0.7, minimum=0,
                           maximum=1),
              action_type=_p("string", "What a match does", "flag_for_review",
                             enum=list(TRIGGER_ACTIONS)),
              action_config=_p("object", "Action settings (e.g. webhook url)")),
        _tool("list_triggers", "trigger:read", "List semantic triggers.",
              status=_p("string", "active, inactive or all (default all)")),
        _tool("delete_trigger", "trigger:write", "Disable a semantic trigger.", "trigger_id",
              trigger_id=_p("string", "Trigger id")),
        _tool("test_trigger", "trigger:read", "Would this content fire the trigger? No side "
              "effects.", "trigger_id", "content",
              trigger_id=_p("string", "Trigger id"), content=_p("string", "Content to test")),
        # branches
        _tool("branch_create", "branch:create", "Create an isolated copy-on-write branch of the "
              "data (views over main until written).",
              name=_p("string", "Branch name"), description=_p("string", "What it is for"),
              ttl_seconds=_p("integer", "Expire after this many seconds", 3600, minimum=1)),
        _tool("branch_query", "branch:query", "Run SQL inside a branch.", "branch_id", "sql",
              branch_id=_p("string", "Branch id"), sql=_SQL),
        _tool("branch_merge", "branch:merge", "Merge a branch's changes into main.", "branch_id",
              branch_id=_p("string", "Branch id"),
              strategy=_p("string", "branch_wins or main_wins", "branch_wins",
                          enum=["branch_wins", "main_wins"])),
        _tool("branch_discard", "branch:discard", "Drop a branch and its data.", "branch_id",
              branch_id=_p("string", "Branch id")),
        _tool("branch_list", "branch:read", "List branches.", status=_p("string", _STATUS)),
    ]
}  # fmt: skip


def tool_definitions() -> list[dict[str, Any]]:
    return [t.definition() for t in TOOLS.values()]


# ---------------------------------------------------------------- arguments

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int, float),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
}


def validate(tool: Tool, arguments: Any) -> dict[str, Any]:
    """Check arguments against the schema; the result carries the schema defaults."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolError(f"{tool.name}: arguments must be a JSON object")
    unknown = sorted(set(arguments) - set(tool.properties))
    if unknown:
        raise ToolError(
            f"{tool.name}: unknown argument(s) {', '.join(unknown)}; "
            f"accepted: {', '.join(tool.properties) or 'none'}"
        )
    out: dict[str, Any] = {}
    for name, prop in tool.properties.items():
        value = arguments.get(name)
        if "type" not in prop:  # any JSON value, null included (set_agent_state.value)
            if name in arguments:
                out[name] = value
            elif name in tool.required:
                raise ToolError(f"{tool.name}: missing required argument {name!r}")
            continue
        if value is None:  # null = not given (LLM clients often send explicit nulls)
            if name in tool.required:
                raise ToolError(f"{tool.name}: missing required argument {name!r}")
            if "default" in prop:
                out[name] = prop["default"]
            continue
        out[name] = _check(tool.name, name, prop, value)
    return out


def _check(tool: str, name: str, prop: dict[str, Any], value: Any) -> Any:
    typ = prop.get("type")
    if typ is None:
        return value
    ok = isinstance(value, _JSON_TYPES[typ]) and not (isinstance(value, bool) and typ != "boolean")
    if ok and typ == "integer":
        ok = float(value).is_integer()
        value = int(value) if ok else value
    if not ok:
        raise ToolError(f"{tool}: argument {name!r} must be a JSON {typ}, got {value!r:.60}")
    if "enum" in prop and value not in prop["enum"]:
        raise ToolError(f"{tool}: {name} must be one of {', '.join(prop['enum'])}, got {value!r}")
    if (
        "minimum" in prop
        and value < prop["minimum"]
        or "maximum" in prop
        and value > prop["maximum"]
    ):
        raise ToolError(
            f"{tool}: {name} must be between {prop.get('minimum', '-inf')} and "
            f"{prop.get('maximum', 'inf')}, got {value}"
        )
    if typ == "string" and name in ("content", "query", "sql", "concept") and not value.strip():
        raise ToolError(f"{tool}: {name} must not be empty")
    return value


# ---------------------------------------------------------------- dispatch

# tool -> (agent function, {tool argument: function argument} where the names differ).
# Every tool argument is passed on (nulls dropped); JSON-typed ones listed in _JSON_ARGS.
AGENT_TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    name: (name, {})
    for name in (
        "store_memory", "search_memory", "get_agent_state", "set_agent_state", "delete_memory",
        "log_reasoning_step", "replay_decision", "get_session_history",
        "register_trigger", "list_triggers", "delete_trigger", "test_trigger",
        "branch_create", "branch_query", "branch_merge", "branch_discard", "branch_list",
    )
}  # fmt: skip
_JSON_ARGS = frozenset({"metadata", "value", "action_config"})


async def _agent(backend: Backend, tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    function, renames = AGENT_TOOLS[tool]
    kwargs = {
        renames.get(arg, arg): Json(value) if arg in _JSON_ARGS else value
        for arg, value in args.items()
        if value is not None or arg == "value"  # set_agent_state(value=null) is a value
    }
    return await backend.agent(function, kwargs)


def _one(rows: list[dict[str, Any]], what: str) -> dict[str, Any]:
    if not rows:
        raise AgentError.not_found(f"{what} not found")
    return rows[0]


async def call_tool(backend: Backend, name: str, arguments: Any) -> dict[str, Any] | list[Any]:
    """Run one tool call; returns the COMPAT result shape, raises on failure."""
    from proxy.api.mcp import sql as mcp_sql

    tool = TOOLS.get(name)
    if tool is None:
        raise ToolError(f"unknown tool {name!r}", code="unknown_tool")
    args = validate(tool, arguments)
    backend.require(tool.scope)
    if name in mcp_sql.SQL_TOOLS:
        return await mcp_sql.SQL_TOOLS[name](backend, args)
    if name == "replay_decision":  # each step row carries chain_valid when verified
        steps = await _agent(backend, name, args)
        valid = steps[0].get("chain_valid") if steps and args["verify_chain"] else None
        return {
            "session_id": args["session_id"],
            "steps": steps,
            "step_count": len(steps),
            "chain_valid": valid,
        }
    rows = await _agent(backend, name, args)
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
        row = rows[0] if rows else {}
        return {**row, flag: bool(row.get(flag, bool(rows))), id_arg: args[id_arg]}

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


async def run_tool(backend: Backend, name: str, arguments: Any) -> dict[str, Any]:
    """call_tool wrapped as an MCP CallToolResult dict; every failure is an error result."""
    try:
        return ok_result(await call_tool(backend, name, arguments))
    except Exception as exc:  # an error result, whatever broke: the client must get an answer
        if not isinstance(exc, AgentError | ToolError | PgError) and not _is_psycopg(exc):
            import logging

            logging.getLogger("hatiproxy.mcp").exception("MCP tool %s failed", name)
        return error_result(exc)
