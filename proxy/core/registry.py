"""The agent-function registry: one declaration per operation, reached from SQL, MCP and REST.

One implementation, three ways in: each operation is an `AgentFunction` registered
here with typed parameters and result columns. The SQL bridge exposes it as a table
function (`SELECT * FROM search_memory('q', top_k := 5)`), the MCP server and the
REST API call the same handler. A handler gets the running `AgentLayer`, the caller's
`Identity` and keyword arguments already converted to Python values, and returns a
list of row dicts keyed by the declared column names (JSON columns take any JSON value).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from transpiler.agent_calls import set_agent_functions

if TYPE_CHECKING:
    # The running agent layer a handler gets (proxy.agent.layer.AgentLayer): core does not
    # know it, it only hands it through.
    AgentLayer = Any


REQUIRED = object()  # default marker of a required parameter

# Parameter and column types are DuckDB type names; JSON values travel as JSON text in SQL.
PARAM_TYPES = frozenset(
    {"VARCHAR", "BIGINT", "DOUBLE", "BOOLEAN", "JSON", "TIMESTAMPTZ", "UUID", "FLOAT[]"}
)


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


Handler = Callable[..., Awaitable[list[dict[str, Any]]]]


@dataclass(frozen=True)
class AgentFunction:
    name: str
    params: tuple[Param, ...]
    columns: tuple[tuple[str, str], ...]  # (name, DuckDB type)
    handler: Handler
    scope: str  # e.g. "memory:read"; checked before the handler runs
    writes: bool = False  # refused for read-only identities and in read_query
    doc: str = ""

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
        self, layer: AgentLayer, who: Identity, kwargs: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Check the scope, run the handler on bound arguments, count the call for the key."""
        who.require(self.scope)
        rows = await self.handler(layer, who, **kwargs)
        if who.meter is not None:
            who.meter.agent_call(self.name)
        return rows


@dataclass
class Registry:
    functions: dict[str, AgentFunction] = field(default_factory=dict)
    # Told the set of names after every change (REGISTRY: the transpiler, see below).
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
        for p in fn.params:
            if p.type not in PARAM_TYPES:
                raise ValueError(f"{fn.name}.{p.name}: unknown parameter type {p.type}")
        self.functions[fn.name] = fn
        self._changed()

    def remove(self, name: str) -> None:
        """Unregister a function (tests that declare one of their own)."""
        del self.functions[name.lower()]
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.names())


# The transpiler is a lower layer and cannot look names up here, so the registry tells
# it which names are agent table functions (transpiler/agent_calls.py).
REGISTRY = Registry(on_change=set_agent_functions)


def agent_function(
    name: str,
    *,
    params: tuple[Param, ...] | list[Param],
    columns: tuple[tuple[str, str], ...] | list[tuple[str, str]],
    scope: str,
    writes: bool = False,
) -> Callable[[Handler], Handler]:
    """Register `handler(layer, who, **kwargs) -> rows` under `name` (lower case)."""

    def register(handler: Handler) -> Handler:
        REGISTRY.add(
            AgentFunction(
                name=name.lower(),
                params=tuple(params),
                columns=tuple(columns),
                handler=handler,
                scope=scope,
                writes=writes,
                doc=(handler.__doc__ or "").strip().split("\n")[0],
            )
        )
        return handler

    return register
