"""Tools as data: a `Tool` is a name, a scope, a description and `Param`s.

MCP's agent tools come from the registry's declarations (`proxy.core.registry`), its SQL
tools from `proxy.api.mcp.sql`; REST's function route (`proxy.api.rest.functions`)
checks its arguments with the same structure. A tool's JSON input schema is
generated from its params, and `Tool.validate` checks call arguments against exactly
that schema with `jsonschema`, so what clients are told and what is enforced cannot
differ. Validation errors become `ToolError`s that name the argument.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from proxy.core.registry import Param

# JSON Schema of each parameter type (JSON: by Param.json_shape, else any JSON value).
_TYPES: dict[str, dict[str, Any]] = {
    "VARCHAR": {"type": "string"},
    "UUID": {"type": "string"},
    "TIMESTAMPTZ": {"type": "string"},
    "BIGINT": {"type": "integer"},
    "DOUBLE": {"type": "number"},
    "BOOLEAN": {"type": "boolean"},
    "FLOAT[]": {"type": "array", "items": {"type": "number"}},
    "JSON": {},
}
_NONEMPTY = r"\S"  # a string with more than whitespace in it


class Target(Protocol):
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


def property_schema(p: Param) -> dict[str, Any]:
    prop: dict[str, Any] = {"description": p.description, **_TYPES[p.type]}
    if p.type == "JSON" and p.json_shape is not None:
        prop["type"] = p.json_shape
    if not p.required and p.default is not None:
        prop["default"] = p.default
    if p.enum:
        prop["enum"] = list(p.enum)
    if p.minimum is not None:
        prop["minimum"] = p.minimum
    if p.maximum is not None:
        prop["maximum"] = p.maximum
    if p.nonempty:
        prop["pattern"] = _NONEMPTY
    return prop


def input_schema(params: tuple[Param, ...]) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: property_schema(p) for p in params},
        "additionalProperties": False,
    }
    required = [p.name for p in params if p.required]
    if required:
        schema["required"] = required
    return schema


# A SQL tool's implementation; agent tools run the agent function of their name.
Run = Callable[["Target", dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    scope: str  # checked before the tool runs (HTTP answers 403 without it)
    params: tuple[Param, ...]
    run: Run | None = field(default=None, compare=False)  # None: an agent function

    @cached_property
    def schema(self) -> dict[str, Any]:
        return input_schema(self.params)

    @cached_property
    def _validator(self) -> Draft202012Validator:
        return Draft202012Validator(self.schema)

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "inputSchema": self.schema}

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Check arguments against the schema; the result carries the schema defaults.

        JSON null means "not given" for a typed argument (LLM clients often send
        explicit nulls); an argument that takes any JSON value keeps a null.
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ToolError(f"{self.name}: arguments must be a JSON object")
        any_json = {p.name for p in self.params if "type" not in self.schema["properties"][p.name]}
        given = {k: v for k, v in arguments.items() if v is not None or k in any_json}
        error = best_match(self._validator.iter_errors(given))
        if error is not None:
            raise ToolError(self._message(error))
        out: dict[str, Any] = {}
        for p in self.params:
            if p.name in given:
                value = given[p.name]
                # JSON Schema counts 3.0 as an integer; the function gets 3.
                out[p.name] = int(value) if p.type == "BIGINT" else value
            elif not p.required and p.default is not None:
                out[p.name] = p.default
        return out

    def _message(self, error: ValidationError) -> str:
        """The library's finding, worded as before: it names the argument."""
        kind, tool = error.validator, self.name
        if kind == "required":
            missing = [n for n in error.validator_value if n not in error.instance]
            return f"{tool}: missing required argument {missing[0]!r}"
        if kind == "additionalProperties":
            unknown = sorted(set(error.instance) - set(self.schema["properties"]))
            accepted = ", ".join(self.schema["properties"]) or "none"
            return f"{tool}: unknown argument(s) {', '.join(unknown)}; accepted: {accepted}"
        name = str(error.path[0]) if error.path else "arguments"
        value = error.instance
        prop = self.schema["properties"].get(name, {})
        if kind == "type":
            return f"{tool}: argument {name!r} must be a JSON {prop.get('type')}, got {value!r:.60}"
        if kind == "enum":
            return f"{tool}: {name} must be one of {', '.join(prop['enum'])}, got {value!r}"
        if kind in ("minimum", "maximum"):
            low, high = prop.get("minimum", "-inf"), prop.get("maximum", "inf")
            return f"{tool}: {name} must be between {low} and {high}, got {value}"
        if kind == "pattern" and error.validator_value == _NONEMPTY:
            return f"{tool}: {name} must not be empty"
        return f"{tool}: argument {name!r}: {error.message}"
