"""Console action on one memory: re-embed it (after the confirmation on its page)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from proxy.api.rest import memory
from proxy.api.rest.auth import Caller
from proxy.api.rest.console.pages import form_page

router = APIRouter(prefix="/console", include_in_schema=False)


@router.post("/memories/{memory_id:uuid}/re-embed")
async def memory_reembed(request: Request, memory_id: uuid.UUID):
    async def build(who: Caller, fields: dict[str, str]):
        await memory.reembed(who.org_id, memory_id, request, who)  # memory:write, owner checks
        return RedirectResponse(f"/console/memories/{memory_id}?queued=1", status_code=303)

    return await form_page(request, "memory.html", build)
