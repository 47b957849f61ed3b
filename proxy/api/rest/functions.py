"""REST: every agent function by name, from its one declaration.

`GET /v1/functions` lists the functions the caller may see (name, doc, scope, whether
it writes, parameters, result columns); `POST /v1/functions/{name}` runs one with a
JSON object of named arguments, checked against the same schema MCP tools use
(`proxy.api.http.schema`), and answers `{"function": name, "rows": [...]}` — the rows
SQL's `SELECT * FROM name(...)` gives. Scopes are the function's own, as on SQL and MCP.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import JSONResponse

from proxy.api.http.schema import Tool, ToolError, input_schema
from proxy.api.rest.auth import Caller, caller, layer_of
from proxy.api.rest.errors import error
from proxy.core.registry import AgentFunction
from proxy.execution.sql_bridge import convert_arg

router = APIRouter(prefix="/v1/functions", tags=["functions"])


def _describe(fn: AgentFunction) -> dict[str, Any]:
    return {
        "name": fn.name,
        "doc": fn.doc,
        "scope": fn.scope,
        "writes": fn.writes,
        "parameters": input_schema(fn.params),
        "columns": [{"name": n, "type": t} for n, t in fn.columns],
    }


@router.get("", summary="Every agent function: parameters, result columns, scope")
async def list_functions(request: Request, who: Annotated[Caller, Depends(caller)]) -> list[dict]:
    return [_describe(fn) for fn in layer_of(request).registry]


@router.post("/{name}", summary="Run an agent function with named arguments (its own scope)")
async def call_function(
    name: str,
    request: Request,
    who: Annotated[Caller, Depends(caller)],
    arguments: Annotated[dict[str, Any] | None, Body()] = None,
) -> Any:
    layer = layer_of(request)
    if name.lower() not in layer.registry:
        return error(404, "not_found", f"no agent function {name!r}; GET /v1/functions lists them")
    fn = layer.registry.get(name)
    try:
        given = Tool(fn.name, fn.doc, fn.scope, fn.params).validate(arguments)
    except ToolError as exc:
        return error(422, "invalid_argument", exc.message)
    types = {p.name: p.type for p in fn.params}
    args = {
        k: v if types[k] == "JSON" or v is None else convert_arg(fn, k, types[k], v)
        for k, v in given.items()
    }
    rows = await fn.call(layer, who.identity, [], args)
    return JSONResponse(json.loads(json.dumps({"function": fn.name, "rows": rows}, default=_plain)))


def _plain(value: Any) -> Any:
    """A row value JSON has no type for: timestamps as ISO 8601, arrays as lists."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if hasattr(value, "tolist"):  # numpy arrays (vectors)
        return value.tolist()
    return str(value)  # UUID, Decimal
