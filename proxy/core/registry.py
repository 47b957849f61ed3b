"""The agent-function registry: one declaration per operation, reached from SQL, MCP and REST.

One implementation, three ways in: each operation is an `AgentFunction` registered
here with typed, described parameters and result columns. The SQL bridge exposes it as
a table function (`SELECT * FROM search_memory('q', top_k := 5)`), the MCP server and the
REST API call the same handler. A handler gets the running `AgentLayer`, the caller's
`Identity` and keyword arguments already converted to Python values, and returns a
list of row dicts keyed by the declared column names (JSON columns take any JSON value).

Everything else is derived from the declaration: the transpiler's set of agent function
names (pushed to it by `REGISTRY`), the MCP tools with their JSON schemas
(`proxy.api.mcp.tools`, for functions declared with `mcp=McpTool(...)`) and the README's
table of agent functions (`proxy.agent.docs`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from proxy.core.errors import AgentError
from proxy.core.identity import Identity

if TYPE_CHECKING:
    # The running agent layer a handler gets (proxy.agent.layer.AgentLayer): core does not
    # know it, it only hands it through.
    AgentLayer = Any


REQUIRED = object()  # default marker of a required parameter

# Parameter and column types are DuckDB type names; JSON values travel as JSON text in SQL.
PARAM_TYPES = frozenset(
    {"VARCHAR", "BIGINT", "DOUBLE", "BOOLEAN", "JSON", "TIMESTAMPTZ", "UUID", "FLOAT[]"}
)


JSON_SHAPES = frozenset({"object", "array"})


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    default: Any = REQUIRED
    description: str = ""  # one line; shown in the MCP schema and the README table
    _: KW_ONLY
    # What a value may be beyond its type. The MCP schema states it and MCP calls are
    # validated against it; SQL calls leave such checks to the handler, as before.
    enum: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    nonempty: bool = False  # a string with more than whitespace in it
    json_shape: str | None = None  # a JSON value's kind: "object", "array"; None: any

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class McpTool:
    """How an agent function is offered as an MCP tool (of the same name and scope).

    args: the parameters the tool takes, in order. A name takes the function's own
    `Param`; a `Param` of the same name and type replaces it for MCP clients only, where
    the public tool is narrower than SQL (required where SQL has a default, a default or
    a range of its own). description: the tool's; default the function's doc.
    """

    args: tuple[str | Param, ...]
    description: str = ""


Handler = Callable[..., Awaitable[list[dict[str, Any]]]]
# A synchronous, thread-safe way to answer a call from any thread (the agent journal's
# acknowledgements): rows, or None when the handler must run.
Fast = Callable[..., list[dict[str, Any]] | None]


@dataclass(frozen=True)
class AgentFunction:
    name: str
    params: tuple[Param, ...]
    columns: tuple[tuple[str, str], ...]  # (name, DuckDB type)
    handler: Handler
    scope: str  # e.g. "memory:read"; checked before the handler runs
    writes: bool = False  # refused for read-only identities and in read_query
    doc: str = ""  # one paragraph: what the function does
    mcp: McpTool | None = None  # None: not an MCP tool
    fast: Fast | None = None  # tried first, on the caller's thread (see Fast)
    # The handler may run on a client connection's own thread and event loop (SQL calls:
    # execution/sql_bridge.py), not only on the server's main loop: everything it touches
    # is thread-safe, and it creates or awaits no asyncio object bound to the main loop.
    any_loop: bool = False

    def tool_params(self) -> tuple[Param, ...]:
        """The MCP tool's parameters (see McpTool); () when it is not a tool."""
        if self.mcp is None:
            return ()
        own = {p.name: p for p in self.params}
        out = []
        for arg in self.mcp.args:
            name = arg if isinstance(arg, str) else arg.name
            if name not in own:
                raise ValueError(f"{self.name}: MCP argument {name!r} is no parameter")
            if isinstance(arg, Param) and arg.type != own[name].type:
                raise ValueError(f"{self.name}.{name}: MCP type {arg.type} != {own[name].type}")
            out.append(own[name] if isinstance(arg, str) else arg)
        return tuple(out)

    @property
    def tool_description(self) -> str:
        return (self.mcp.description if self.mcp else "") or self.doc

    def bind(self, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Positional + named arguments -> keyword arguments, with defaults and checks."""
        if len(args) > len(self.params):
            raise AgentError.invalid(
                f"{self.name}() takes at most {len(self.params)} arguments, got {len(args)}"
            )
        out: dict[str, Any] = {}
        for p, value in zip(self.params, args, strict=False):
            out[p.name] = value
        names = {p.name for p in self.params}
        for key, value in kwargs.items():
            if key not in names:
                raise AgentError.invalid(
                    f"{self.name}() has no parameter {key!r}",
                    hint="parameters: " + ", ".join(p.name for p in self.params),
                )
            if key in out:
                raise AgentError.invalid(f"{self.name}(): {key!r} given twice")
            out[key] = value
        for p in self.params:
            if p.name not in out:
                if p.required:
                    raise AgentError.invalid(f"{self.name}() needs the argument {p.name!r}")
                out[p.name] = p.default
        return out

    async def call(
        self, layer: AgentLayer, who: Identity, args: list[Any], kwargs: dict[str, Any]
    ) -> list[dict[str, Any]]:
        return await self.run(layer, who, self.bind(args, kwargs))

    async def run(
        self, layer: AgentLayer, who: Identity, kwargs: dict[str, Any], *, fast: bool = True
    ) -> list[dict[str, Any]]:
        """Check the scope, run the handler on bound arguments, count the call for the key.
        `fast`: try the fast path first (off the event loop: it may wait for an fsync)."""
        who.require(self.scope)
        before = getattr(layer, "before_call", None)
        if before is not None:  # e.g. memory reads wait for journaled stores
            await before(self, who)
        rows = None
        if fast and self.fast is not None:
            rows = await asyncio.to_thread(self.fast, layer, who, **kwargs)
        if rows is None:
            rows = await self.handler(layer, who, **kwargs)
        if who.meter is not None:
            who.meter.agent_call(self.name)
        return rows

    def run_fast(
        self, layer: AgentLayer, who: Identity, kwargs: dict[str, Any]
    ) -> list[dict[str, Any]] | None:
        """The fast path on the caller's own thread (a client connection's): rows, or None
        when the call must go to `run` on the main loop (with fast=False)."""
        if self.fast is None:
            return None
        who.require(self.scope)
        rows = self.fast(layer, who, **kwargs)
        if rows is not None and who.meter is not None:
            who.meter.agent_call(self.name)
        return rows


def check_params(where: str, params: Iterable[Param]) -> None:
    """A declaration is complete: known types, a one-line description each, json_shape
    only where the value is JSON."""
    seen: set[str] = set()
    for p in params:
        if p.name in seen:
            raise ValueError(f"{where}: parameter {p.name} declared twice")
        seen.add(p.name)
        if p.type not in PARAM_TYPES:
            raise ValueError(f"{where}.{p.name}: unknown parameter type {p.type}")
        if not p.description.strip() or "\n" in p.description:
            raise ValueError(f"{where}.{p.name}: needs a one-line description")
        if p.json_shape is not None and (p.type != "JSON" or p.json_shape not in JSON_SHAPES):
            raise ValueError(f"{where}.{p.name}: json_shape is for JSON parameters")


@dataclass
class Registry:
    functions: dict[str, AgentFunction] = field(default_factory=dict)
    # Told the set of names after every change (REGISTRY: the transpiler, see watch).
    on_change: Callable[[frozenset[str]], None] | None = None

    def __contains__(self, name: str) -> bool:
        return name.lower() in self.functions

    def __iter__(self) -> Iterator[AgentFunction]:
        return iter(list(self.functions.values()))

    def get(self, name: str) -> AgentFunction:
        return self.functions[name.lower()]

    def names(self) -> frozenset[str]:
        return frozenset(self.functions)

    def add(self, fn: AgentFunction) -> None:
        if fn.name in self.functions:
            raise ValueError(f"agent function {fn.name} registered twice")
        if not fn.doc.strip():
            raise ValueError(f"agent function {fn.name} needs a doc (its docstring)")
        check_params(fn.name, fn.params)
        check_params(f"{fn.name} (MCP)", fn.tool_params())
        self.functions[fn.name] = fn
        self._changed()

    def remove(self, name: str) -> None:
        """Unregister a function (tests that declare one of their own)."""
        del self.functions[name.lower()]
        self._changed()

    def watch(self, on_change: Callable[[frozenset[str]], None]) -> None:
        """Tell `on_change` the names now and after every change."""
        self.on_change = on_change
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.names())


# Every agent function of the server (proxy.agent tells the transpiler its names).
REGISTRY = Registry()


def agent_function(
    name: str,
    *,
    params: tuple[Param, ...] | list[Param],
    columns: tuple[tuple[str, str], ...] | list[tuple[str, str]],
    scope: str,
    writes: bool = False,
    mcp: McpTool | None = None,
    registry: Registry | None = None,
    fast: Fast | None = None,
    any_loop: bool = False,
) -> Callable[[Handler], Handler]:
    """Register `handler(layer, who, **kwargs) -> rows` under `name` (lower case).

    The handler's docstring (its first paragraph) is the function's doc. registry:
    REGISTRY unless given (a test may declare into a Registry of its own).
    """

    def register(handler: Handler) -> Handler:
        (REGISTRY if registry is None else registry).add(
            AgentFunction(
                name=name.lower(),
                params=tuple(params),
                columns=tuple(columns),
                handler=handler,
                scope=scope,
                writes=writes,
                doc=first_paragraph(handler.__doc__),
                mcp=mcp,
                fast=fast,
                any_loop=any_loop,
            )
        )
        return handler

    return register


def first_paragraph(text: str | None) -> str:
    lines = (text or "").strip().split("\n\n")[0].splitlines()
    return " ".join(line.strip() for line in lines)
