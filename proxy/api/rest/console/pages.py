"""Console routes: each page calls the REST handler a /v1 client would reach."""

from __future__ import annotations

import datetime as dt
import functools
import json
import time
import uuid
from typing import Any, Literal, TypeVar
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ValidationError

from proxy.agent.memory.search import recency_score
from proxy.api.rest import cot, keys, memory
from proxy.api.rest.auth import Caller, layer_of
from proxy.api.rest.console.session import (
    COOKIE,
    TRUST,
    console_caller,
    csrf_ok,
    csrf_token,
    form,
)
from proxy.core.errors import AgentError

router = APIRouter(prefix="/console", include_in_schema=False)
static = StaticFiles(packages=[("proxy.api.rest.console", "static")])


@functools.cache
def _templates() -> Any:
    """The console's Jinja environment, made at the first page: importing jinja2 was ~0.1 s
    of every server start, and most servers never show a console page."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    return Environment(
        loader=PackageLoader("proxy.api.rest.console", "templates"),
        autoescape=select_autoescape(["html"]),
    )


SEARCH_TOP_K = 20
B = TypeVar("B", bound=BaseModel)
STARTED = time.monotonic()  # imported as the server starts: statements/s is since then


def render(request: Request, name: str, who: Caller | None, status: int = 200, **ctx: Any):
    html = (
        _templates()
        .get_template(name)
        .render(
            who=who,
            trust=who is not None and who.principal is None,
            csrf=csrf_token(request),
            page=name.removesuffix(".html"),
            status=status,
            **ctx,
        )
    )
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def _signin(message: str | None = None) -> Response:
    target = "/console/signin" + ("?expired=1" if message else "")
    return RedirectResponse(target, status_code=303)


async def show_page(request: Request, name: str, build) -> Response:
    """Resolve the caller, run `build(who)` -> context; AgentError -> its status page."""
    who = await console_caller(request)
    if who is None:  # a cookie the server no longer accepts says so on the sign-in page
        return _signin("expired" if COOKIE in request.cookies else None)
    try:
        ctx = await build(who)
    except AgentError as exc:
        return render(request, "error.html", who, exc.http_status, error=exc)
    if isinstance(ctx, Response):
        return ctx
    return render(request, name, who, **ctx)


async def form_page(request: Request, name: str, act) -> Response:
    """A form's POST: refused (not signed in, CSRF token not this sign-in's), else
    `act(who, fields)` -> context or response, as `show_page` builds a page."""
    fields, refused = await checked_form(request)
    if refused is not None:
        return refused
    return await show_page(request, name, lambda who: act(who, fields))


def _bad_csrf(request: Request, who: Caller | None) -> Response:
    error = AgentError.forbidden("the form's CSRF token does not match this sign-in")
    return render(request, "error.html", who, 403, error=error)


async def checked_form(request: Request) -> tuple[dict[str, str], Response | None]:
    """A POST's fields, or the response that refuses it (not signed in, bad CSRF token)."""
    fields = await form(request)
    who = await console_caller(request)
    if who is None:
        return fields, _signin()
    if not csrf_ok(request, fields):
        return fields, _bad_csrf(request, who)
    return fields, None


@router.get("/signin")
async def signin_form(request: Request, expired: int = 0):
    trust = await trust_mode(request)
    return render(request, "signin.html", None, expired=bool(expired), trust_available=trust)


async def trust_mode(request: Request) -> bool:
    """Would this request be admitted without a key (trust mode)?"""
    host = request.client.host if request.client else None
    return request.app.state.services.access.trust_allowed(host)


@router.post("/signin")
async def signin(request: Request):
    fields = await form(request)
    key = fields.get("api_key", "").strip()
    response = RedirectResponse("/console/memories", status_code=303)
    response.set_cookie(COOKIE, key or TRUST, httponly=True, samesite="strict", path="/console")
    return response


@router.post("/signout")
async def signout(request: Request):
    response = RedirectResponse("/console/signin", status_code=303)
    response.delete_cookie(COOKIE, path="/console")
    return response


@router.get("")
async def home():
    return RedirectResponse("/console/memories", status_code=303)


# --- memories --------------------------------------------------------------------------


FILTERS = ("q", "agent", "type", "min_importance", "status", "since", "until")
STATUSES = ("pending", "embedded", "failed")


def _filters(request: Request) -> dict[str, str]:
    q = request.query_params
    return {k: q.get(k, "").strip() for k in FILTERS}


def _day(value: str, name: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if value else None
    except ValueError:
        raise AgentError.invalid(f"{name} must be a date such as 2026-11-26") from None


def _keep(row: dict[str, Any], f: dict[str, str]) -> bool:
    """Filters the REST call does not apply itself (importance, days; status for search)."""
    if f["type"] and row["memory_type"] != f["type"]:
        return False
    if f["status"] and row.get("embedding_status") != f["status"]:
        return False
    created = row["created_at"].date() if row.get("created_at") else None
    since, until = _day(f["since"], "From"), _day(f["until"], "To")
    if created and ((since and created < since) or (until and created > until)):
        return False
    if f["min_importance"]:
        try:
            return float(row["importance"]) >= float(f["min_importance"])
        except ValueError:
            raise AgentError.invalid("importance must be a number between 0 and 1") from None
    return True


def _aware(t: dt.datetime) -> dt.datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=dt.UTC)


@router.get("/memories")
async def memories(request: Request):
    f = _filters(request)

    async def build(who: Caller):
        agent = f["agent"] or None
        if f["status"] and f["status"] not in STATUSES:
            raise AgentError.invalid(f"embedding status must be one of {', '.join(STATUSES)}")
        if f["q"]:
            hits = await memory.search_memories(
                who.org_id, request, who, query=f["q"], agent_id=agent, top_k=SEARCH_TOP_K
            )
            hits = [h for h in hits if _keep(h["entry"], f)]
            at = dt.datetime.now(dt.UTC)
            for h in hits:  # the weighted score's recency part, as search computed it
                h["recency"] = recency_score(_aware(h["entry"]["created_at"]), at)
            return {"f": f, "hits": hits, "rows": None, "statuses": STATUSES}
        rows = await memory.list_memories(
            who.org_id,
            request,
            who,
            agent_id=agent,
            memory_type=f["type"] or None,
            limit=100,
            embedding_model=None,
            embedding_status=f["status"] or None,
        )
        kept = [r for r in rows if _keep(r, f)]
        return {"f": f, "hits": None, "rows": kept, "statuses": STATUSES}

    return await show_page(request, "memories.html", build)


async def _chain(request: Request, who: Caller, memory_id: str) -> list[dict[str, Any]]:
    """The memory, then each memory that superseded the one before (newest last)."""
    identity = await memory.owner_identity(who, request, memory_id)
    seen: list[dict[str, Any]] = []
    current: str | None = memory_id
    while current and len(seen) < 50 and current not in {r["memory_id"] for r in seen}:
        rows = await layer_of(request).call("get_memory", identity, memory_id=current)
        if not rows:
            break
        row = {**rows[0], "memory_id": str(rows[0]["memory_id"])}
        seen.append(row)
        nxt = row.get("superseded_by_id")
        current = str(nxt) if nxt else None
    return seen


@router.get("/memories/{memory_id:uuid}")
async def memory_detail(
    request: Request, memory_id: uuid.UUID, confirm: int = 0, reembed: int = 0, queued: int = 0
):
    async def build(who: Caller):
        who.require("memory:read")
        chain = await _chain(request, who, str(memory_id))
        return {"chain": chain, "confirm": bool(confirm), "reembed": reembed, "queued": queued}

    return await show_page(request, "memory.html", build)


@router.post("/memories/{memory_id:uuid}/delete")
async def memory_delete(request: Request, memory_id: uuid.UUID):
    async def build(who: Caller, fields: dict[str, str]):
        await memory.delete_memory(who.org_id, memory_id, request, who)
        return RedirectResponse("/console/memories?deleted=1", status_code=303)

    return await form_page(request, "memories.html", build)


# --- reasoning sessions ----------------------------------------------------------------


@router.get("/sessions")
async def sessions(request: Request):
    async def build(who: Caller):
        rows = await cot.sessions(request, who, agent_id=None, limit=200)
        return {"sessions": rows}

    return await show_page(request, "sessions.html", build)


@router.get("/sessions/{session_id}")
async def replay(request: Request, session_id: str, agent: str | None = None):
    async def build(who: Caller):
        doc = await cot.replay(session_id, request, who, agent_id=agent)
        check = await cot.verify(session_id, request, who, agent_id=doc["agent_id"])
        exported = await cot.export(session_id, request, who, agent_id=doc["agent_id"])
        approvals = json.loads(exported.body)["approvals"]
        return {
            "replay": doc,
            "check": check,
            "approvals": approvals,
            "reviewer": may_review(who),
        }

    return await show_page(request, "replay.html", build)


@router.post("/sessions/{session_id}/approve")
async def replay_approve(request: Request, session_id: str):
    """Record an approve / reject of the session (the /v1 approvals route: admin keys)."""

    async def build(who: Caller, fields: dict[str, str]):
        body = form_body(
            cot.ApprovalBody,
            session_id=session_id,
            agent_id=fields.get("agent", ""),
            decision=decision_of(fields),
            reason=fields.get("reason") or None,
        )
        await cot.approve(body, request, who)
        target = f"/console/sessions/{quote(session_id)}?agent={quote(body.agent_id)}"
        return RedirectResponse(target + "#approvals", status_code=303)

    return await form_page(request, "replay.html", build)


def form_body(model: type[B], **values: Any) -> B:
    """A /v1 request body from form fields; what it refuses is a 400 page, not a 500."""
    try:
        return model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise AgentError.invalid(f"{where}: {first['msg']}") from None


def decision_of(fields: dict[str, str]) -> Literal["approve", "reject"]:
    decision = fields.get("decision", "")
    if decision == "approve" or decision == "reject":
        return decision
    raise AgentError.invalid("the decision must be approve or reject")


def may_review(who: Caller) -> bool:
    """Approvals need an admin key (or trust mode); others do not see the forms."""
    return who.principal is None or who.principal.role == "admin"


@router.get("/sessions/{session_id}/export")
async def replay_export(request: Request, session_id: str, agent: str | None = None):
    """The /v1 export download (steps, hash chain, approvals) for the signed-in key."""

    async def build(who: Caller):
        return await cot.export(session_id, request, who, agent_id=agent)

    return await show_page(request, "replay.html", build)


# --- keys (admins) ---------------------------------------------------------------------


async def key_lists(request: Request, who: Caller) -> dict[str, Any]:
    org_keys = await keys.list_org_keys(who.org_id, request, who)
    agent_keys = await keys.list_agent_keys(who.org_id, request, who)
    return {
        "org_keys": org_keys,
        "agent_keys": agent_keys,
        "roles": ("analyst", "auditor", "admin"),
    }


@router.get("/keys")
async def key_page(request: Request):
    async def build(who: Caller):
        return {**await key_lists(request, who), "created": None}

    return await show_page(request, "keys.html", build)


@router.post("/keys")
async def key_create(request: Request):
    async def build(who: Caller, fields: dict[str, str]):
        body = keys.OrgKeyCreate(
            name=fields.get("name") or None, role=fields.get("role", "analyst")
        )
        created = await keys.create_org_key(who.org_id, body, request, who)
        return {**await key_lists(request, who), "created": created}

    return await form_page(request, "keys.html", build)


@router.post("/keys/{key_id}/revoke")
async def key_revoke(request: Request, key_id: str):
    async def build(who: Caller, fields: dict[str, str]):
        if fields.get("agent_key"):
            await keys.revoke_agent_key(who.org_id, key_id, request, who)
        else:
            await keys.revoke_org_key(who.org_id, key_id, request, who)
        return RedirectResponse("/console/keys", status_code=303)

    return await form_page(request, "keys.html", build)


# --- server ----------------------------------------------------------------------------


def _sample(registry: Any, name: str, labels: dict[str, str] | None = None) -> float:
    return registry.get_sample_value(name, labels or {}) or 0.0


@router.get("/server")
async def server(request: Request):
    async def build(who: Caller):
        who.require("query_audit:read")  # the scope of /metrics
        services = request.app.state.services
        reg = services.metrics.registry
        statements = sum(
            s.value
            for metric in reg.collect()
            if metric.name == "hatiproxy_queries"
            for s in metric.samples
            if s.name == "hatiproxy_queries_total"
        )
        elapsed = time.monotonic() - STARTED
        stats = await memory.embedding_stats(who.org_id, request, who)
        return {
            "connections": int(_sample(reg, "hatiproxy_connections")),
            "statements": int(statements),
            "rate": statements / elapsed if elapsed > 0 else 0.0,
            "cache_ratio": _sample(reg, "hatiproxy_embedding_cache_hit_ratio"),
            "cache_pending": int(_sample(reg, "hatiproxy_embedding_cache_pending")),
            "stats": stats,
        }

    return await show_page(request, "server.html", build)
