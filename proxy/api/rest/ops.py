"""REST: GET /health (no auth) and GET /metrics (Prometheus text)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from proxy import __version__
from proxy.api.rest.auth import Caller, caller
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
