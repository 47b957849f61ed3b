"""REST: GET /health (no auth), GET /metrics (Prometheus text), GET /whoami."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from proxy import __version__
from proxy.api.rest.auth import Caller, caller, layer_of
from proxy.telemetry.metrics import CONTENT_TYPE

router = APIRouter()


@router.get("/health", summary="Liveness: 200 while the server runs (no authentication)")
async def health(request: Request) -> dict[str, str]:
    embedder = request.app.state.services.semantic.embedder
    return {
        "status": "ok",
        "version": __version__,
        "model": getattr(embedder, "model_name", None) or "none",
    }


@router.get(
    "/metrics",
    summary="Prometheus metrics (needs the query_audit:read scope)",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}},
)
async def metrics(request: Request, who: Annotated[Caller, Depends(caller)]) -> Response:
    who.require("query_audit:read")
    body = await request.app.state.services.scrape_metrics()
    return Response(body, media_type=CONTENT_TYPE)


@router.get("/v1/whoami", summary="Who this caller is: organisation, agent, login, key role")
async def whoami(request: Request, who: Annotated[Caller, Depends(caller)]) -> dict:
    """The same row as SQL's `whoami()` and the MCP tool: the agent this caller acts as
    when it names none (the `X-HatiData-Agent-Id` header names one)."""
    rows = await layer_of(request).call("whoami", who.identity)
    return rows[0]
