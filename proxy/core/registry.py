"""What every agent-layer module shares: identities, errors, and the function registry.

One implementation, three ways in: each operation is an `AgentFunction` registered
here with typed parameters and result columns. The SQL bridge exposes it as a table
function (`SELECT * FROM search_memory('q', top_k := 5)`), the MCP server and the
REST API call the same handler. A handler gets the running `AgentLayer`, the caller's
`Identity` and keyword arguments already converted to Python values, and returns a
list of row dicts keyed by the declared column names (JSON columns take any JSON value).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.access.table_limits import TableLimits
    from proxy.access.usage import KeyMeter
    from proxy.agent.layer import AgentLayer

INTERNAL_SCHEMA = "hatidata_internal"  # the real tables; main holds identity-filtered views


@dataclass(frozen=True)
class Identity:
    """Who is calling: every read and write is scoped to (org_id, agent_id)."""

    org_id: str
    agent_id: str
    user: str = ""
    # None: unrestricted (trust / configured users); an API key sets its real scopes.
    scopes: frozenset[str] | None = None
    role: str | None = None  # the API key's role (proxy.access.scopes.ROLES); None = no key
    key_id: str | None = None
    # The key's allowed_schemas / allowed_tables (None: any relation); see sql_policy.
    limits: TableLimits | None = None
    # Counts the key's queries and agent calls (proxy.access.usage); None: not counted.
    meter: KeyMeter | None = field(default=None, compare=False, repr=False)

    def require(self, scope: str) -> None:
        if self.scopes is not None and scope not in self.scopes:
            raise AgentError.forbidden(f"this identity lacks the {scope} scope")

    @property
    def sql_read_only(self) -> bool:
        """SQL that changes data is refused (a key without query:write)."""
        return self.scopes is not None and "query:write" not in self.scopes

    @property
    def server_files(self) -> bool:
        """May SQL read or write files on the server (read_csv, COPY TO, ATTACH)? Admins only."""
        return self.role is None or self.role == "admin"


class AgentError(Exception):
    """A failure a caller can act on; carries both its SQLSTATE and its HTTP status."""

    def __init__(
        self, code: str, message: str, *, sqlstate: str, http_status: int, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code  # stable machine-readable error code (REST / MCP)
        self.message = message
        self.sqlstate = sqlstate
        self.http_status = http_status
        self.hint = hint

    @classmethod
    def invalid(cls, message: str, hint: str | None = None) -> AgentError:
        return cls("invalid_argument", message, sqlstate="22023", http_status=422, hint=hint)

    @classmethod
    def not_found(cls, message: str) -> AgentError:
        # Also the answer for another agent's or org's object: never leak that it exists.
        return cls("not_found", message, sqlstate="42704", http_status=404)

    @classmethod
    def forbidden(cls, message: str) -> AgentError:
        return cls("forbidden", message, sqlstate="42501", http_status=403)

    @classmethod
    def conflict(cls, message: str) -> AgentError:
        return cls("conflict", message, sqlstate="55000", http_status=409)

    @classmethod
    def unavailable(cls, message: str, hint: str | None = None) -> AgentError:
        return cls("unavailable", message, sqlstate="58000", http_status=503, hint=hint)


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

    def __contains__(self, name: str) -> bool:
        return name.lower() in self.functions

    def get(self, name: str) -> AgentFunction:
        return self.functions[name.lower()]

    def add(self, fn: AgentFunction) -> None:
        if fn.name in self.functions:
            raise ValueError(f"agent function {fn.name} registered twice")
        for p in fn.params:
            if p.type not in PARAM_TYPES:
                raise ValueError(f"{fn.name}.{p.name}: unknown parameter type {p.type}")
        self.functions[fn.name] = fn


REGISTRY = Registry()


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
