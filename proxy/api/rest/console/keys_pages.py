"""Console pages for key rotation and per-key usage (admins: keys:manage, as on /v1)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from proxy.api.rest import key_usage, keys
from proxy.api.rest.auth import Caller
from proxy.api.rest.console.pages import form_page, key_lists, show_page

router = APIRouter(prefix="/console", include_in_schema=False)


@router.post("/keys/{key_id}/rotate")
async def key_rotate(request: Request, key_id: str):
    async def build(who: Caller, fields: dict[str, str]):
        if fields.get("agent_key"):
            rotated = await keys.rotate_agent_key(who.org_id, key_id, request, who)
        else:
            rotated = await keys.rotate_org_key(who.org_id, key_id, request, who)
        # Listed after the rotation, so the old key already shows as revoked.
        return {**await key_lists(request, who), "created": None, "rotated": rotated}

    return await form_page(request, "keys.html", build)


@router.get("/keys/{key_id}/usage")
async def key_usage_page(request: Request, key_id: str, agent_key: int = 0):
    async def build(who: Caller):
        if agent_key:
            usage = await key_usage.agent_key_usage(who.org_id, key_id, request, who)
            branches = await key_usage.agent_key_branch_usage(who.org_id, key_id, request, who)
        else:
            usage = await key_usage.org_key_usage(who.org_id, key_id, request, who)
            branches = None
        return {"u": usage, "branches": branches}

    return await show_page(request, "key_usage.html", build)
