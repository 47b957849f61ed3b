"""Console pages for branches: the list, one branch's diff, conflicts and audit trail,
merge or discard after a confirmation (the /v1 branch route functions and scopes)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from proxy.api.rest import branch_approval, branches
from proxy.api.rest.auth import Caller
from proxy.api.rest.console.pages import decision_of, form_body, form_page, may_review, show_page
from proxy.core.errors import AgentError

router = APIRouter(prefix="/console", include_in_schema=False)
STRATEGIES = ("branch_wins", "main_wins")


@router.get("/branches")
async def branch_list(request: Request):
    async def build(who: Caller):
        return {"branches": await branches.list_branches(who.org_id, request, who)}

    return await show_page(request, "branches.html", build)


@router.get("/branches/{branch_id}")
async def branch_detail(
    request: Request, branch_id: str, confirm: Literal["", "merge", "discard"] = ""
):
    async def build(who: Caller):
        b = await branches.get_branch(who.org_id, branch_id, request, who)
        ctx = {"b": b, "confirm": confirm, "strategies": STRATEGIES, "diff": None, "conf": None}
        ctx["reviewer"] = may_review(who)
        if b["status"] == "active":  # diff and conflicts compare a live branch with main
            ctx["diff"] = await branches.branch_diff(who.org_id, branch_id, request, who)
            ctx["conf"] = await branches.branch_conflicts(who.org_id, branch_id, request, who)
        return ctx

    return await show_page(request, "branch.html", build)


@router.post("/branches/{branch_id}/merge")
async def branch_merge(request: Request, branch_id: str):
    async def build(who: Caller, fields: dict[str, str]):
        strategy = fields.get("strategy", "branch_wins")
        body = branches.MergeBody(strategy=strategy if strategy in STRATEGIES else "branch_wins")
        done = await branches.merge_branch(who.org_id, branch_id, request, who, body)
        return RedirectResponse(f"/console/branches/{done['id']}", status_code=303)

    return await form_page(request, "branch.html", build)


@router.post("/branches/{branch_id}/discard")
async def branch_discard(request: Request, branch_id: str):
    async def build(who: Caller, fields: dict[str, str]):
        done = await branches.discard_branch(who.org_id, branch_id, request, who)
        return RedirectResponse(f"/console/branches/{done['id']}", status_code=303)

    return await form_page(request, "branch.html", build)


@router.post("/branches/{branch_id}/approval")
async def branch_approve(request: Request, branch_id: str):
    """Approve or reject the branch's merge from a reasoning session (the /v1
    merge-approval route: admin keys; the decision goes to that session's ledger too)."""

    async def build(who: Caller, fields: dict[str, str]):
        body = form_body(
            branch_approval.MergeApprovalBody,
            branch_id=branch_id,
            decision=decision_of(fields),
            reason=fields.get("reason") or None,
        )
        session = fields.get("session_id", "").strip()
        if not session:
            raise AgentError.invalid("name the reasoning session the decision is recorded in")
        done = await branch_approval.merge_approval(
            session, body, request, who, agent_id=fields.get("agent") or None
        )
        return RedirectResponse(f"/console/branches/{done['branch_id']}", status_code=303)

    return await form_page(request, "branch.html", build)
