"""REST: the chain-of-thought ledger under /v1/cot (seed 001; not org-scoped paths).

The organisation is always the API key's. An agent key (hd_agent_) reads and writes
only its own agent's sessions; an org key (hd_live_) speaks for every agent of its org.

Decisions (documented in the OpenAPI descriptions too):
- content_hash: the ledger stores its own hash, SHA-256 of the RFC 8785 canonical JSON
  of `content` (see proxy.agent.ledger.hashing). A client hash is optional; when given it
  must be either a SHA-256 of the content (canonical JSON, or the usual `json.dumps`
  forms) or the hatidata-agent client's chained form `sha256(prev + trace_type +
  str(content) + timestamp)` (prev: the previous trace's content_hash in the same
  request, '' at step 0; `ControlPlaneClient.build_cot_session`). Anything else is 422,
  and the whole batch is refused. `org_id` (must be the key's org) and `step_index`
  (must increase within a session in the request) are accepted because that client
  sends them; the ledger numbers steps itself, in arrival order.
- Sessions are per agent in the ledger. When an org key names a session id that
  several of its agents use, `?agent_id=` picks one; without it the answer is 409.
- Approvals need an admin key (or trust mode); reviewed_by is "<key name> (key <id>)".
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from proxy.access.scopes import SCOPES
from proxy.agent.ledger import inputs as ledger_input
from proxy.agent.ledger.hashing import accepted_content_hashes
from proxy.agent.ledger.schema import ADMIN_SCOPE, ORG_CHAIN, SESSIONS, TRACES
from proxy.agent.ledger.verify import (
    approval_document,
    ingest_document,
    ledger_document,
    step_document,
)
from proxy.agent.names import MAX_NAME
from proxy.api.rest.auth import Caller, access_of, caller, layer_of
from proxy.api.rest.errors import ErrorBody
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

router = APIRouter(
    prefix="/v1/cot",
    tags=["chain of thought"],
    responses={409: {"model": ErrorBody, "description": "Conflict (see the message)"}},
)
Who = Annotated[Caller, Depends(caller)]
TraceType = Literal[tuple(ledger_input.TRACE_TYPES + ledger_input.STEP_TYPES)]  # type: ignore[valid-type]
SessionId = Annotated[str, Path(min_length=1, max_length=MAX_NAME)]
AgentQuery = Annotated[
    str | None,
    Query(max_length=MAX_NAME, description="Which agent's session (org keys)"),
]
_HEX64 = r"^[0-9a-fA-F]{64}$"


class TraceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    trace_id: uuid.UUID
    session_id: str = Field(min_length=1, max_length=MAX_NAME)
    agent_id: str = Field(min_length=1, max_length=MAX_NAME)
    timestamp: str = Field(
        json_schema_extra={"format": "date-time"}, description="ISO 8601; no zone means UTC"
    )
    trace_type: TraceType  # the seed's five types, and the MCP step types
    content: dict[str, Any] = Field(description="The trace payload (a JSON object)")
    content_hash: str | None = Field(
        None,
        pattern=_HEX64,
        description="SHA-256 hex of content (RFC 8785 canonical JSON, or the hatidata-agent "
        "client's chained form); a mismatch refuses the batch (422). Omitted: computed.",
    )
    parent_trace_id: uuid.UUID | None = None
    metadata: dict[str, Any] | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0)
    org_id: str | None = Field(None, description="Must be the API key's organisation")
    step_index: int | None = Field(
        None, ge=0, description="Client's step number; the ledger numbers steps itself"
    )

    @field_validator("timestamp")
    @classmethod
    def _iso(cls, value: str) -> str:
        try:
            ledger_input.timestamp("timestamp", value)
        except AgentError as exc:
            raise ValueError(exc.message) from None
        return value


class IngestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    traces: list[TraceIn] = Field(min_length=1, max_length=ledger_input.MAX_TRACES)


class Ingested(BaseModel):
    ingested: int = Field(description="Traces appended now")
    skipped: int = Field(description="Idempotent retries of traces already stored")
    trace_ids: list[str]


class SessionSummary(BaseModel):
    session_id: str
    agent_id: str
    total_steps: int
    chain_valid: bool
    started_at: dt.datetime
    ended_at: dt.datetime


class Step(BaseModel):
    trace_id: str
    step_index: int
    trace_type: str
    content: Any
    content_hash: str
    timestamp: str
    parent_trace_id: str | None
    metadata: Any = None
    importance: float | None = None
    prev_hash: str
    chain_hash: str
    step_valid: bool | None = None


class Replay(BaseModel):
    session_id: str
    agent_id: str
    total_steps: int
    chain_valid: bool
    steps: list[Step]


class InvalidHash(BaseModel):
    step_index: int
    trace_id: str | None
    field: str
    problem: str


class Verified(BaseModel):
    session_id: str
    agent_id: str
    chain_valid: bool
    total_traces: int
    invalid_hashes: list[InvalidHash]
    first_broken_step: int | None = None
    first_broken_trace_id: str | None = None
    reason: str | None = None


class LedgerProblem(BaseModel):
    kind: str = Field(
        description="What broke: content_hash, chain_hash, prev_hash, "
        "step_index, session, org_chain or org_head"
    )
    session_id: str | None
    agent_id: str | None
    step_index: int | None
    seq: int | None = Field(description="The organisation chain entry, when one is involved")
    trace_id: str | None
    reason: str


class LedgerSummary(BaseModel):
    reason: str
    sessions_checked: int
    steps_checked: int
    org_chain_length: int
    org_head_hash: str = Field(description="Keep it elsewhere to compare with later")


class LedgerVerified(BaseModel):
    ledger_valid: bool
    summary: LedgerSummary
    problems: list[LedgerProblem]


class ExportDocument(BaseModel):
    model_config = ConfigDict(extra="allow")
    format: str
    exported_at: str
    session: dict[str, Any]
    verification: dict[str, Any]
    steps: list[dict[str, Any]]
    approvals: list[dict[str, Any]]


class ApprovalBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = Field(min_length=1, max_length=MAX_NAME)
    agent_id: str = Field(min_length=1, max_length=MAX_NAME)
    decision: Literal["approve", "reject"]
    trace_id: uuid.UUID | None = None
    reason: str | None = Field(None, max_length=10_000)


class Approval(BaseModel):
    id: str
    decision: Literal["approve", "reject"]
    session_id: str
    agent_id: str
    trace_id: str | None
    reason: str | None
    reviewed_by: str
    created_at: str


def _ledger_identity(who: Caller, agent_id: str | None) -> Identity:
    """The identity the ledger functions see: agent keys as their agent; org keys (and
    trust mode) with cot:admin, so they may name any agent of their org."""
    if who.bound_agent is not None:
        return who.as_agent(agent_id)
    base = who.as_agent(agent_id)
    scopes = frozenset(SCOPES) if base.scopes is None else base.scopes
    return Identity(
        base.org_id, base.agent_id, base.user, scopes | {ADMIN_SCOPE}, base.role, base.key_id
    )


async def session_owner(
    request: Request, who: Caller, session_id: str, agent_id: str | None
) -> tuple[Identity, str]:
    """(ledger identity, owning agent) of a session; 404 unknown, 409 ambiguous."""
    if who.bound_agent is not None:
        agent_id = who.as_agent(agent_id).agent_id  # 403 when naming another agent

    def find(cur) -> list[str]:
        sql = (  # the organisation chain too: a deleted session is reported, not unknown
            f"SELECT agent_id FROM {SESSIONS} WHERE org_id = ? AND session_id = ? "
            f"UNION SELECT agent_id FROM {TRACES} WHERE org_id = ? AND session_id = ? "
            f"UNION SELECT agent_id FROM {ORG_CHAIN} WHERE org_id = ? AND session_id = ?"
        )
        return sorted({r[0] for r in cur.execute(sql, [who.org_id, session_id] * 3).fetchall()})

    agents = await layer_of(request).db.run(find)
    missing = AgentError.not_found(f"no reasoning session {session_id!r}")
    if agent_id is not None:
        if agent_id not in agents:
            raise missing
        return _ledger_identity(who, agent_id), agent_id
    if not agents:
        raise missing
    if len(agents) > 1:
        ambiguous = AgentError.conflict(
            f"session {session_id!r} exists for several agents; pass ?agent_id="
        )
        ambiguous.hint = "agents: " + ", ".join(agents[:10])
        raise ambiguous
    return _ledger_identity(who, agents[0]), agents[0]


def _client_hashes(body: IngestBody, org_id: str) -> None:
    """Check org_id, step_index order and each client content_hash (see module doc)."""
    last: dict[tuple[str, str], TraceIn] = {}
    for i, t in enumerate(body.traces):
        where = f"traces[{i}]"
        if t.org_id is not None and t.org_id != org_id:
            raise AgentError.forbidden(f"{where}.org_id is not this API key's organisation")
        key = (t.agent_id, t.session_id)
        before = last.get(key)
        last[key] = t
        earlier = None if before is None else before.step_index
        if earlier is not None and t.step_index is not None and t.step_index <= earlier:
            raise AgentError.invalid(
                f"{where}.step_index {t.step_index} does not follow {earlier}",
                hint="the ledger appends a session's traces in request order",
            )
        if t.content_hash is None:
            continue
        supplied = t.content_hash.lower()
        if supplied in accepted_content_hashes(t.content):
            continue
        # hatidata-agent's build_cot_trace: sha256(prev + type + str(content) + timestamp).
        prev = None
        if before is not None and before.content_hash is not None:
            prev = before.content_hash
        elif before is None and t.step_index in (None, 0):
            prev = ""
        if prev is not None:
            text = f"{prev}{t.trace_type}{t.content!s}{t.timestamp}"
            if hashlib.sha256(text.encode()).hexdigest() == supplied:
                continue
        raise AgentError.invalid(
            f"{where}.content_hash does not match its content",
            hint="send the SHA-256 of the RFC 8785 canonical JSON of content, or omit it",
        )


@router.post(
    "/ingest",
    response_model=Ingested,
    summary="Append traces, all or nothing, at most 1000 (cot:write)",
    description="Idempotent: a trace_id already stored with the same fields is skipped; the "
    "same trace_id with different fields is 409. An agent key may ingest only its own "
    "agent's traces (403).",
)
async def ingest(body: IngestBody, request: Request, who: Who):
    who.require("cot:write")
    for i, t in enumerate(body.traces):
        if who.bound_agent is not None and t.agent_id != who.bound_agent:
            raise AgentError.forbidden(
                f"traces[{i}].agent_id is {t.agent_id!r}; this key is bound to agent "
                f"{who.bound_agent!r}"
            )
    _client_hashes(body, who.org_id)
    traces = [
        t.model_dump(mode="json", exclude={"org_id", "step_index", "content_hash"})
        for t in body.traces
    ]
    for t in traces:  # the ledger reads an absent optional field as null
        for optional in ("parent_trace_id", "metadata", "importance"):
            if t[optional] is None:
                del t[optional]
    identity = _ledger_identity(who, body.traces[0].agent_id)
    rows = await layer_of(request).call("ingest_traces", identity, traces=traces)
    return ingest_document(rows)


@router.get(
    "/sessions",
    response_model=list[SessionSummary],
    summary="Reasoning sessions of the caller's org, most recently active first (cot:read)",
)
async def sessions(
    request: Request,
    who: Who,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
):
    who.require("cot:read")
    if who.bound_agent is not None:
        agent_id = who.as_agent(agent_id).agent_id
    identity = _ledger_identity(who, agent_id)
    return await layer_of(request).call(
        "get_session_history", identity, limit=limit, agent_id=agent_id
    )


@router.get(
    "/sessions/{session_id}/replay",
    response_model=Replay,
    summary="A session's steps in order, with hash-chain verification (cot:read)",
)
async def replay(session_id: SessionId, request: Request, who: Who, agent_id: AgentQuery = None):
    who.require("cot:read")
    identity, agent = await session_owner(request, who, session_id, agent_id)
    layer = layer_of(request)
    rows = await layer.call(
        "replay_decision", identity, session_id=session_id, verify_chain=True, agent_id=agent
    )
    check = await layer.call("verify_chain", identity, session_id=session_id, agent_id=agent)
    steps = [{**step_document(r), "step_valid": r["step_valid"]} for r in rows]
    return {
        "session_id": session_id,
        "agent_id": agent,
        "total_steps": len(steps),
        "chain_valid": check[0]["chain_valid"],
        "steps": steps,
    }


@router.get(
    "/sessions/{session_id}/verify",
    response_model=Verified,
    summary="Recompute every hash of a session; names broken steps (cot:read)",
)
async def verify(session_id: SessionId, request: Request, who: Who, agent_id: AgentQuery = None):
    who.require("cot:read")
    identity, agent = await session_owner(request, who, session_id, agent_id)
    rows = await layer_of(request).call(
        "verify_chain", identity, session_id=session_id, agent_id=agent
    )
    row = rows[0]
    return {**row, "agent_id": agent, "invalid_hashes": row["invalid_hashes"] or []}


@router.get(
    "/verify",
    response_model=LedgerVerified,
    summary="Verify the whole ledger: the organisation chain and every session (cot:read)",
    description="One problem per break (a deleted session, missing last steps, an edited or "
    "forged step, a damaged organisation chain). Agent keys see their own agent's sessions; "
    "org keys every agent's.",
)
async def verify_whole_ledger(request: Request, who: Who):
    who.require("cot:read")
    rows = await layer_of(request).call("verify_ledger", _ledger_identity(who, None))
    return ledger_document(rows)


def _filename(session_id: str) -> str:
    return "cot-" + (re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:200] or "session") + ".json"


@router.get(
    "/sessions/{session_id}/export",
    response_model=ExportDocument,
    summary="The whole session (steps, verification, approvals) as a JSON download (cot:read)",
    description='Sent with `Content-Disposition: attachment; filename="cot-<session>.json"` '
    "(characters other than letters, digits, '.', '_' and '-' become '_').",
)
async def export(session_id: SessionId, request: Request, who: Who, agent_id: AgentQuery = None):
    who.require("cot:read")
    identity, agent = await session_owner(request, who, session_id, agent_id)
    rows = await layer_of(request).call(
        "export_session", identity, session_id=session_id, agent_id=agent
    )
    disposition = f'attachment; filename="{_filename(session_id)}"'
    return JSONResponse(rows[0]["document"], headers={"Content-Disposition": disposition})


def require_reviewer(who: Caller) -> None:
    """Approvals need cot:write and an admin key (or trust mode): 403 otherwise."""
    who.require("cot:write")
    if who.principal is not None and who.principal.role != "admin":
        raise AgentError.forbidden("approvals need an admin key")


async def reviewer_identity(request: Request, who: Caller, identity: Identity) -> Identity:
    """`identity` with the reviewer named after the admin key ("<name> (key <id>)")."""
    if who.principal is None:
        return identity
    key = await access_of(request).get_key(who.principal.key_id, who.org_id)
    reviewer = f"{key.name} (key {key.key_id})"
    return Identity(
        identity.org_id, identity.agent_id, reviewer, identity.scopes, identity.role,
        identity.key_id,
    )  # fmt: skip


@router.post(
    "/approvals",
    response_model=Approval,
    summary="Record an immutable approve / reject of a session or step (admin keys only)",
)
async def approve(body: ApprovalBody, request: Request, who: Who):
    require_reviewer(who)
    identity, agent = await session_owner(request, who, body.session_id, body.agent_id)
    identity = await reviewer_identity(request, who, identity)
    rows = await layer_of(request).call(
        "record_approval",
        identity,
        session_id=body.session_id,
        decision=body.decision,
        trace_id=None if body.trace_id is None else str(body.trace_id),
        reason=body.reason,
        agent_id=agent,
    )
    return approval_document(rows[0])
