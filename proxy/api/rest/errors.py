"""One JSON shape for every REST failure: `{"error": <stable code>, "message": ...}`.

The `error` field is a machine-readable code (unauthorized, forbidden, not_found,
invalid_request, invalid_argument, conflict, rate_limited, payload_too_large,
unavailable, internal_error); `message` says what to do; `hint` is optional.
HatiDataAgent's transpile client reads `error` on a 429, so the code sits there.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from proxy.access.service import AuthError, TooManyFailures
from proxy.core.errors import AgentError

log = logging.getLogger("hatiproxy.rest")


class ErrorBody(BaseModel):
    error: str
    message: str
    hint: str | None = None


# Declared on every route, so the OpenAPI document matches what errors look like.
COMMON_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Malformed request (e.g. body is not JSON)"},
    401: {"model": ErrorBody, "description": "Missing or invalid API key"},
    403: {"model": ErrorBody, "description": "The key lacks the scope this operation needs"},
    404: {"model": ErrorBody, "description": "No such object in the caller's organisation"},
    413: {"model": ErrorBody, "description": "Request body too large"},
    422: {"model": ErrorBody, "description": "Invalid request body or parameters"},
    429: {"model": ErrorBody, "description": "Rate limit or login-failure limit reached"},
    503: {"model": ErrorBody, "description": "A needed service (e.g. the model) is unavailable"},
}

_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "rate_limited",
}


def error(status: int, code: str, message: str, hint: str | None = None, **extra: Any):
    body: dict[str, Any] = {"error": code, "message": message, **extra}
    if hint:
        body["hint"] = hint
    headers = {"WWW-Authenticate": "ApiKey"} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (routers included into the app too).

    The routes themselves decide (`matches` with each method), so typed parameters
    count: `/{memory_id:uuid}` does not serve `/search`, and DELETE on
    .../agent-memory/search is answered Allow: GET."""
    allowed = []
    for method in _METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] is Match.FULL for route in request.app.routes):
            allowed.append(method)
    return allowed


def install(app: FastAPI) -> None:
    @app.exception_handler(AgentError)
    async def _agent(_: Request, exc: AgentError) -> JSONResponse:
        return error(exc.http_status, exc.code, exc.message, exc.hint)

    @app.exception_handler(AuthError)
    async def _auth(_: Request, exc: AuthError) -> JSONResponse:
        if isinstance(exc, TooManyFailures):
            response = error(429, "too_many_auth_failures", str(exc))
            response.headers["Retry-After"] = str(max(1, round(exc.retry_after)))
            return response
        return error(401, "unauthorized", f"unauthorized: {exc}")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for e in exc.errors()[:10]:
            where = ".".join(str(p) for p in e.get("loc", ()))
            problems.append(f"{where}: {e.get('msg', 'invalid')}")
        return error(422, "invalid_request", "; ".join(problems) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, "error")
        response = error(exc.status_code, code, str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        if exc.status_code == 405:  # Starlette names only the first matching route's methods
            response.headers["Allow"] = ", ".join(_allowed_methods(request))
        return response

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        log.exception("REST handler failed")
        return error(500, "internal_error", "internal error; see the server log")
