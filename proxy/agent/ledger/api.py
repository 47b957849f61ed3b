"""The ledger's registered functions (SQL table functions, MCP tools, REST handlers).

Every function accepts Python values as the SQL bridge converts them and as MCP /
REST pass them (strings for timestamps and UUIDs, dicts for JSON). `agent_id`
arguments default to the calling agent; naming another agent needs `cot:admin`
(see ledger.py). Documents for MCP / REST: `proxy.agent.ledger.verify.*_document`.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from proxy.agent.ledger import approvals as ledger_approvals
from proxy.agent.ledger import audit
from proxy.agent.ledger import inputs as check
from proxy.agent.ledger.inputs import ALL_TYPES, STEP_TYPES, TRACE_TYPES, Trace
from proxy.agent.ledger.schema import EXPORT_FORMAT, READ, WRITE, is_admin
from proxy.agent.ledger.verify import approval_document, iso, step_document
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

MAX_SESSIONS = 1000
ALL_STEP_TYPES = STEP_TYPES + TRACE_TYPES  # what log_reasoning_step accepts (ALL_TYPES)
MAX_APPROVALS = 10_000

_APPEND_COLUMNS = [
    ("trace_id", "UUID"),
    ("session_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("step_index", "BIGINT"),
    ("content_hash", "VARCHAR"),
    ("chain_hash", "VARCHAR"),
]
_APPROVAL_COLUMNS = [
    ("id", "UUID"),
    ("decision", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("trace_id", "UUID"),
    ("reason", "VARCHAR"),
    ("reviewed_by", "VARCHAR"),
    ("created_at", "TIMESTAMPTZ"),
]


@agent_function(
    "log_reasoning_step",
    params=[
        Param("session_id", "VARCHAR", description="Reasoning session id"),
        Param("content", "VARCHAR", description="The step's text", nonempty=True),
        Param("step_type", "VARCHAR", "observation", "Kind of step", enum=ALL_STEP_TYPES),
        Param("metadata", "JSON", None, "Key-value metadata", json_shape="object"),
        Param("importance", "DOUBLE", 0.5, "Importance 0.0-1.0", minimum=0, maximum=1),
        Param("parent_trace_id", "UUID", None, "The step this one follows from"),
    ],
    columns=[*_APPEND_COLUMNS, ("timestamp", "TIMESTAMPTZ")],
    scope=WRITE,
    writes=True,
    mcp=McpTool(
        (
            "session_id",
            # MCP offers the public tool's step types (COMPAT-HATIDATA.md), not trace types.
            Param("step_type", "VARCHAR", "observation", "Kind of step", enum=STEP_TYPES),
            "content",
            "metadata",
            "importance",
        ),
        "Append a step to a reasoning session's hash-chained ledger. Step types: "
        + ", ".join(STEP_TYPES)
        + ".",
    ),
)
async def log_reasoning_step(
    layer: AgentContext,
    who: Identity,
    *,
    session_id: str,
    content: Any,
    step_type: str,
    metadata: Any,
    importance: Any,
    parent_trace_id: Any,
) -> list[dict[str, Any]]:
    """Append one reasoning step to the calling agent's session (created on first step)."""
    if content is None or (isinstance(content, str) and not content.strip()):
        raise AgentError.invalid("content is required")
    digest, _ = check.content_digest("step", content)
    trace = Trace(
        trace_id=str(uuid.uuid4()),
        session_id=check.name("session_id", session_id),
        agent_id=who.agent_id,
        timestamp=dt.datetime.now(dt.UTC),
        step_type=check.kind("step_type", step_type, ALL_TYPES),
        content=content,
        content_hash=digest,
        parent_trace_id=check.uuid_text("parent_trace_id", parent_trace_id),
        metadata=check.metadata("metadata", metadata),
        importance=check.importance("importance", importance, default=0.5),
    )
    rows = await layer.ledger.append(who, [trace])
    return [{**rows[0], "timestamp": trace.timestamp}]


@agent_function(
    "ingest_traces",
    params=[
        Param("traces", "JSON", description="The traces, as REST ingests them", json_shape="array")
    ],
    columns=[*_APPEND_COLUMNS, ("status", "VARCHAR")],
    scope=WRITE,
    writes=True,
)
async def ingest_traces(layer: AgentContext, who: Identity, *, traces: Any) -> list[dict[str, Any]]:
    """Append up to 1000 traces in one transaction; status 'ingested' or 'duplicate'."""
    parsed = check.parse_traces(who, traces, admin=is_admin(who))
    return await layer.ledger.append(who, parsed)


_REPLAY_COLUMNS = [
    ("session_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("step_index", "BIGINT"),
    ("trace_id", "UUID"),
    ("step_type", "VARCHAR"),
    ("content", "JSON"),
    ("metadata", "JSON"),
    ("importance", "DOUBLE"),
    ("timestamp", "TIMESTAMPTZ"),
    ("parent_trace_id", "UUID"),
    ("content_hash", "VARCHAR"),
    ("prev_hash", "VARCHAR"),
    ("chain_hash", "VARCHAR"),
    ("step_valid", "BOOLEAN"),
    ("chain_valid", "BOOLEAN"),
]


@agent_function(
    "replay_decision",
    params=[
        Param("session_id", "VARCHAR", description="Session to replay"),
        Param("verify_chain", "BOOLEAN", False, "Verify the SHA-256 hash chain"),
        Param("agent_id", "VARCHAR", None, "Another agent's session (needs cot:admin)"),
    ],
    columns=_REPLAY_COLUMNS,
    scope=READ,
    mcp=McpTool(
        ("session_id", "verify_chain"),
        "All steps of a reasoning session in order, optionally with the hash chain verified.",
    ),
)
async def replay_decision(
    layer: AgentContext, who: Identity, *, session_id: str, verify_chain: Any, agent_id: Any
) -> list[dict[str, Any]]:
    """A session's steps in order; step_valid / chain_valid are NULL unless verify_chain."""
    verify = _flag("verify_chain", verify_chain)
    agent, steps, head, result = await layer.ledger.verify(who, session_id, agent_id)
    out = []
    for s in steps:
        row = {k: s[k] for k, _ in _REPLAY_COLUMNS if k in s}
        row["step_valid"] = (s["step_index"] not in result.bad_steps) if verify else None
        row["chain_valid"] = result.chain_valid if verify else None
        out.append(row)
    return out


_VERIFY_COLUMNS = [
    ("session_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("chain_valid", "BOOLEAN"),
    ("total_traces", "BIGINT"),
    ("first_broken_step", "BIGINT"),
    ("first_broken_trace_id", "UUID"),
    ("reason", "VARCHAR"),
    ("invalid_hashes", "JSON"),
]


@agent_function(
    "verify_chain",
    params=[
        Param("session_id", "VARCHAR", description="Session to verify"),
        Param("agent_id", "VARCHAR", None, "Another agent's session (needs cot:admin)"),
    ],
    columns=_VERIFY_COLUMNS,
    scope=READ,
)
async def verify_chain(
    layer: AgentContext, who: Identity, *, session_id: str, agent_id: Any
) -> list[dict[str, Any]]:
    """Recompute every hash of a session; names the first broken step."""
    agent, _, _, result = await layer.ledger.verify(who, session_id, agent_id)
    return [{"session_id": session_id, "agent_id": agent, **result.as_dict()}]


@agent_function(
    "verify_ledger",
    params=[],
    columns=audit.COLUMNS,
    scope=READ,
    mcp=McpTool(
        (),
        "Verify the whole reasoning ledger: the organisation chain and every session. "
        "Reports deleted sessions, missing last steps, edited or forged steps.",
    ),
)
async def verify_ledger(layer: AgentContext, who: Identity) -> list[dict[str, Any]]:
    """Check the organisation chain and every session: one row per problem, then a summary row."""
    return await audit.verify_ledger(layer.ledger, who)


@agent_function(
    "get_session_history",
    params=[
        Param("limit", "BIGINT", 50, "Most sessions to return", minimum=1),
        Param("agent_id", "VARCHAR", None, "Only this agent's sessions"),
        Param("since", "TIMESTAMPTZ", None, "Only sessions active since this ISO 8601 timestamp"),
    ],
    columns=[
        ("session_id", "VARCHAR"),
        ("agent_id", "VARCHAR"),
        ("total_steps", "BIGINT"),
        ("chain_valid", "BOOLEAN"),
        ("started_at", "TIMESTAMPTZ"),
        ("ended_at", "TIMESTAMPTZ"),
    ],
    scope=READ,
    mcp=McpTool(("limit", "agent_id", "since"), "Recent reasoning sessions with step counts."),
)
async def get_session_history(
    layer: AgentContext, who: Identity, *, limit: Any, agent_id: Any, since: Any
) -> list[dict[str, Any]]:
    """Reasoning sessions, most recently active first (ended_at >= since when given)."""
    limit = _limit(limit, MAX_SESSIONS)
    if agent_id is not None:
        agent_id = check.name("agent_id", agent_id)
    when = None if since is None else check.timestamp("since", since)
    return await layer.ledger.sessions(who, limit, agent_id, when)


@agent_function(
    "export_session",
    params=[
        Param("session_id", "VARCHAR", description="Session to export"),
        Param("agent_id", "VARCHAR", None, "Another agent's session (needs cot:admin)"),
    ],
    columns=[("session_id", "VARCHAR"), ("agent_id", "VARCHAR"), ("document", "JSON")],
    scope=READ,
)
async def export_session(
    layer: AgentContext, who: Identity, *, session_id: str, agent_id: Any
) -> list[dict[str, Any]]:
    """The whole session as one JSON document: steps, verification, approvals."""
    agent, steps, head, result = await layer.ledger.verify(who, session_id, agent_id)
    approvals = await ledger_approvals.listing(layer.ledger, who, session_id, agent, MAX_APPROVALS)
    document = {
        "format": EXPORT_FORMAT,
        "exported_at": iso(dt.datetime.now(dt.UTC)),
        "exported_by": who.user or who.agent_id,
        "hash": {
            "algorithm": "sha256",
            "canonical_json": "RFC 8785 (JCS)",
            "content_hash": "sha256(canonical_json(content))",
            "chain_hash": "sha256(canonical_json({agent_id, content_hash, importance, "
            "metadata, org_id, parent_trace_id, prev_hash, session_id, step_index, "
            "step_type, timestamp, trace_id}))",
            "genesis_prev_hash": "0" * 64,
        },
        "session": {
            "session_id": session_id,
            "agent_id": agent,
            "org_id": who.org_id,
            "total_steps": len(steps),
            "recorded_steps": None if head is None else head["total_steps"],
            "head_hash": None if head is None else head["head_hash"],
            "started_at": iso(head["started_at"]) if head else None,
            "ended_at": iso(head["ended_at"]) if head else None,
        },
        "verification": {"session_id": session_id, **result.as_dict()},
        "steps": [step_document(s) for s in steps],
        "approvals": [approval_document(a) for a in approvals],
    }
    return [{"session_id": session_id, "agent_id": agent, "document": document}]


@agent_function(
    "record_approval",
    params=[
        Param("session_id", "VARCHAR", description="The session decided on"),
        Param("decision", "VARCHAR", description="The decision", enum=("approve", "reject")),
        Param("trace_id", "UUID", None, "One step of the session, when the decision is on it"),
        Param("reason", "VARCHAR", None, "Why"),
        Param("agent_id", "VARCHAR", None, "Another agent's session (needs cot:admin)"),
    ],
    columns=_APPROVAL_COLUMNS,
    scope=WRITE,
    writes=True,
)
async def record_approval(
    layer: AgentContext,
    who: Identity,
    *,
    session_id: str,
    decision: Any,
    trace_id: Any,
    reason: Any,
    agent_id: Any,
) -> list[dict[str, Any]]:
    """Record an immutable approve / reject of a session (or one of its steps)."""
    tid = check.uuid_text("trace_id", trace_id)
    return [
        await ledger_approvals.record(
            layer.ledger, who, session_id, decision, tid, reason, agent_id
        )
    ]


@agent_function(
    "list_approvals",
    params=[
        Param("session_id", "VARCHAR", None, "Only this session's approvals"),
        Param("agent_id", "VARCHAR", None, "Another agent's approvals (needs cot:admin)"),
        Param("limit", "BIGINT", 100, "Most approvals to return", minimum=1),
    ],
    columns=_APPROVAL_COLUMNS,
    scope=READ,
)
async def list_approvals(
    layer: AgentContext, who: Identity, *, session_id: Any, agent_id: Any, limit: Any
) -> list[dict[str, Any]]:
    """Approvals of one session, or of all the agent's sessions, oldest first."""
    return await ledger_approvals.listing(
        layer.ledger, who, session_id, agent_id, _limit(limit, MAX_APPROVALS)
    )


def _limit(value: Any, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= most:
        raise AgentError.invalid(f"limit must be an integer between 1 and {most}, got {value!r}")
    return value


def _flag(what: str, value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    raise AgentError.invalid(f"{what} must be true or false")
