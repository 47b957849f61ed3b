"""Console pages for semantic triggers: the list, one trigger's test form and its fires.

Each page calls the /v1 trigger route functions, so an agent key sees only its own
triggers (another's is a 404 page) and fires need query_audit:read as on /v1.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from proxy.api.rest import inbox, triggers
from proxy.api.rest.auth import Caller
from proxy.api.rest.console.pages import form_page, show_page
from proxy.core.errors import AgentError

router = APIRouter(prefix="/console", include_in_schema=False)
FIRES_SHOWN = 20
INBOX_SHOWN = 50


async def _detail(request: Request, who: Caller, trigger_id: str) -> dict[str, Any]:
    """The trigger (404 when this key may not see it) and its recent fires, or why not."""
    listed = await triggers.list_triggers(who.org_id, request, who)
    found = [t for t in listed if trigger_id in (str(t["id"]), t["name"])]
    if not found:
        raise AgentError.not_found(f"trigger {trigger_id!r} not found")
    trigger = found[0]
    fires, fires_error = [], None
    try:
        fires = await triggers.trigger_fires(
            who.org_id, str(trigger["id"]), request, who, limit=FIRES_SHOWN
        )
    except AgentError as exc:  # e.g. an agent key without query_audit:read
        fires_error = exc.message
    return {"t": trigger, "fires": fires, "fires_error": fires_error, "tested": None, "text": ""}


@router.get("/triggers")
async def trigger_list(request: Request):
    async def build(who: Caller):
        listed = await triggers.list_triggers(who.org_id, request, who)
        notes = await inbox.read_inbox(
            request, who, unread_only=False, mark_read=False, limit=INBOX_SHOWN
        )
        return {"triggers": listed, "inbox": notes, "unread": sum(not n["read"] for n in notes)}

    return await show_page(request, "triggers.html", build)


@router.post("/inbox/read")
async def inbox_acknowledge(request: Request):
    """Mark the signed-in agent's unread notifications read (the /v1 inbox/read route)."""

    async def build(who: Caller, fields: dict[str, str]):
        await inbox.read_inbox(request, who, unread_only=True, mark_read=True, limit=10_000)
        return RedirectResponse("/console/triggers#inbox", status_code=303)

    return await form_page(request, "triggers.html", build)


@router.get("/triggers/{trigger_id}")
async def trigger_detail(request: Request, trigger_id: str):
    async def build(who: Caller):
        return await _detail(request, who, trigger_id)

    return await show_page(request, "trigger.html", build)


@router.post("/triggers/{trigger_id}/test")
async def trigger_test(request: Request, trigger_id: str):
    async def build(who: Caller, fields: dict[str, str]):
        text = fields.get("text", "")
        ctx = await _detail(request, who, trigger_id)
        if not text.strip():
            raise AgentError.invalid("give a text to test against the trigger's concept")
        body = triggers.TestBody(text=text)
        tested = await triggers.test_trigger(who.org_id, str(ctx["t"]["id"]), body, request, who)
        return {**ctx, "tested": tested, "text": text}

    return await form_page(request, "trigger.html", build)
