"""REST: POST /v1/cot/sessions/{session_id}/merge-approval (seed 001, "Merge Approval from
CoT Context").

Dual-logs one approve / reject decision about a branch's merge:
1. the CoT ledger: an immutable approval of the session (record_approval, as
   POST /v1/cot/approvals does: admin keys only, reviewed_by names the key), whose
   reason reads "merge of branch <id>: <reason> [steps: <cot_step_references>]";
2. the branch: its latest decision and an audit entry carrying the session id, the
   ledger approval id and the step references (proxy.agent.branches.approval).

A branch whose latest decision is reject refuses to merge everywhere (REST 409
merge_rejected, SQL/MCP SQLSTATE 55000) until a later approve; approve does not merge.
Unknown session or branch, or another org's: 404. A branch no longer active: 409,
checked before anything is written.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from proxy.agent.branches import approval as branch_approval
from proxy.agent.branches import org as branch_org
from proxy.api.rest.auth import Caller, caller, layer_of
from proxy.api.rest.cot import (
    AgentQuery,
    SessionId,
    require_reviewer,
    reviewer_identity,
    session_owner,
)
from proxy.api.rest.errors import ErrorBody

router = APIRouter(
    prefix="/v1/cot",
    tags=["chain of thought"],
    responses={409: {"model": ErrorBody, "description": "Conflict (see the message)"}},
)
Who = Annotated[Caller, Depends(caller)]
StepRef = Annotated[str, Field(min_length=1, max_length=100)]


class MergeApprovalBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    branch_id: str = Field(
        min_length=1, max_length=1000, description="The branch's id (32 hex digits or UUID) or name"
    )
    decision: Literal["approve", "reject"]
    reason: str | None = Field(None, max_length=4000)
    cot_step_references: list[StepRef] = Field(default_factory=list, max_length=50)


class MergeApproval(BaseModel):
    session_id: str
    branch_id: str
    decision: Literal["approve", "reject"]
    cot_logged: bool = Field(description="The approval is in the session's ledger")
    branch_updated: bool = Field(description="The branch's decision and audit trail are set")
    approval_id: str = Field(description="The ledger approval's id")
    agent_id: str = Field(description="The agent whose session it is")
    reviewed_by: str


def _ledger_reason(branch_id: str, body: MergeApprovalBody) -> str:
    text = f"merge of branch {branch_id}"
    if body.reason:
        text += f": {body.reason}"
    if body.cot_step_references:
        text += f" [steps: {', '.join(body.cot_step_references)}]"
    return text


@router.post(
    "/sessions/{session_id}/merge-approval",
    response_model=MergeApproval,
    summary="Approve or reject a branch merge from a reasoning session (admin keys only)",
    description="Records the decision in the session's ledger and on the branch. A latest "
    "'reject' makes merges of the branch fail (409 merge_rejected) until an 'approve'.",
)
async def merge_approval(
    session_id: SessionId,
    body: MergeApprovalBody,
    request: Request,
    who: Who,
    agent_id: AgentQuery = None,
):
    require_reviewer(who)
    layer = layer_of(request)
    identity, agent = await session_owner(request, who, session_id, agent_id)
    bid, _ = await branch_org.owner(layer, who.org_id, body.branch_id, who.bound_agent)
    await branch_approval.ensure_open(layer, who.org_id, bid)
    identity = await reviewer_identity(request, who, identity)
    rows = await layer.call(
        "record_approval",
        identity,
        session_id=session_id,
        decision=body.decision,
        trace_id=None,
        reason=_ledger_reason(bid, body),
        agent_id=agent,
    )
    reviewer = rows[0]["reviewed_by"]
    await branch_approval.decide(
        layer,
        who.org_id,
        bid,
        body.decision,
        reviewer=reviewer,
        reason=body.reason,
        session_id=session_id,
        approval_id=str(rows[0]["id"]),
        refs=list(body.cot_step_references),
    )
    return {
        "session_id": session_id,
        "branch_id": bid,
        "decision": body.decision,
        "cot_logged": True,
        "branch_updated": True,
        "approval_id": str(rows[0]["id"]),
        "agent_id": agent,
        "reviewed_by": reviewer,
    }
