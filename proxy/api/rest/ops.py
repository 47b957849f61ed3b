"""REST: GET /health (no auth) and GET /metrics (Prometheus text)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from proxy import __version__
from proxy.api.rest.auth import Caller, caller

router = APIRouter()


@router.get("/health", summary="Liveness: 200 while the server runs (no authentication)")
async def health(request: Request) -> dict[str, str]:
    server = request.app.state.server
    embedder = server.engine.semantic.embedder
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
    from proxy.telemetry import metrics as m

    body = await m.scrape(request.app.state.server)
    return Response(body, media_type=m.CONTENT_TYPE)
