"""Validation of ledger input: every trace is checked before anything is written.

A trace (REST ingest, seed 001) has trace_id (UUID), session_id, agent_id (defaults
to the caller), timestamp (ISO 8601; no zone means UTC), trace_type, content (any
JSON), content_hash (optional; when given it must be the SHA-256 of the content, see
`ledger_hash.accepted_content_hashes`), parent_trace_id (UUID, optional), and the
optional extras metadata (object) and importance (0..1). `step_type` is accepted as
another name of trace_type. Unknown fields are refused (a typo must not drop data).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from proxy.agent.ledger.hashing import accepted_content_hashes, canonical_bytes, sha256_hex
from proxy.agent.names import name
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

MAX_TRACES = 1000
MAX_CONTENT_BYTES = 1 << 20  # canonical JSON of one step's content
MAX_BATCH_BYTES = 64 << 20

# MCP log_reasoning_step step types (COMPAT-HATIDATA.md) and REST trace types (seed 001).
STEP_TYPES = (
    "observation", "hypothesis", "analysis", "decision", "action", "reflection",
    "planning", "evaluation", "retrieval", "synthesis", "delegation", "error",
)  # fmt: skip
TRACE_TYPES = ("thought", "tool_call", "tool_result", "llm_request", "llm_response")
ALL_TYPES = frozenset(STEP_TYPES + TRACE_TYPES)

_FIELDS = frozenset(
    {
        "trace_id", "session_id", "agent_id", "timestamp", "trace_type", "step_type",
        "content", "content_hash", "parent_trace_id", "metadata", "importance",
    }
)  # fmt: skip
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class Trace:
    trace_id: str
    session_id: str
    agent_id: str
    timestamp: dt.datetime
    step_type: str
    content: Any
    content_hash: str
    parent_trace_id: str | None
    metadata: dict[str, Any] | None
    importance: float | None

    def same_as(self, other: Trace) -> bool:
        return (
            self.session_id == other.session_id
            and self.agent_id == other.agent_id
            and self.step_type == other.step_type
            and self.content_hash == other.content_hash
            and self.timestamp == other.timestamp
            and self.parent_trace_id == other.parent_trace_id
        )


def parse_traces(who: Identity, traces: Any, *, admin: bool) -> list[Trace]:
    """The ingest argument (a JSON array, or `{"traces": [...]}`) -> validated traces."""
    if isinstance(traces, str | bytes):
        try:
            traces = json.loads(traces)
        except ValueError:
            raise AgentError.invalid("traces must be a JSON array") from None
    if isinstance(traces, dict) and set(traces) == {"traces"}:
        traces = traces["traces"]
    if not isinstance(traces, list):
        raise AgentError.invalid("traces must be a JSON array of trace objects")
    if len(traces) > MAX_TRACES:
        raise AgentError.invalid(
            f"{len(traces)} traces in one call; the limit is {MAX_TRACES}",
            hint="split the batch into calls of at most 1000 traces",
        )
    out = [_trace(who, i, t, admin=admin) for i, t in enumerate(traces)]
    total = sum(len(canonical_bytes(t.content)) for t in out)
    if total > MAX_BATCH_BYTES:
        raise AgentError.invalid(
            f"the batch holds {total} bytes of content; the limit is {MAX_BATCH_BYTES}"
        )
    return out


def _trace(who: Identity, i: int, t: Any, *, admin: bool) -> Trace:
    where = f"traces[{i}]"
    if not isinstance(t, dict):
        raise AgentError.invalid(f"{where} must be a JSON object")
    unknown = sorted(set(t) - _FIELDS)
    if unknown:
        raise AgentError.invalid(
            f"{where} has unknown field(s): {', '.join(unknown)}",
            hint="fields: " + ", ".join(sorted(_FIELDS)),
        )
    agent = t.get("agent_id")
    if agent is None:
        agent = who.agent_id
    agent = name(f"{where}.agent_id", agent)
    if agent != who.agent_id and not admin:
        raise AgentError.forbidden(
            f"{where}.agent_id is {agent!r}, but this identity is agent {who.agent_id!r}"
        )
    if "trace_type" in t and "step_type" in t and t["trace_type"] != t["step_type"]:
        raise AgentError.invalid(f"{where}: trace_type and step_type differ")
    step_type = t.get("trace_type", t.get("step_type"))
    if step_type is None:
        raise AgentError.invalid(f"{where}.trace_type is required")
    content = t.get("content")
    if "content" not in t or content is None:
        raise AgentError.invalid(f"{where}.content is required (any JSON value)")
    digest, _ = content_digest(where, content)
    supplied = t.get("content_hash")
    if supplied is not None:
        if not isinstance(supplied, str) or not _HEX64.fullmatch(supplied):
            raise AgentError.invalid(f"{where}.content_hash must be 64 hex digits (SHA-256)")
        if supplied.lower() not in accepted_content_hashes(content):
            raise AgentError.invalid(
                f"{where}.content_hash does not match its content",
                hint=f"SHA-256 of the RFC 8785 canonical JSON of this content is {digest}",
            )
    if "timestamp" not in t:
        raise AgentError.invalid(f"{where}.timestamp is required (ISO 8601)")
    return Trace(
        trace_id=uuid_text(f"{where}.trace_id", t.get("trace_id"), required=True),
        session_id=name(f"{where}.session_id", t.get("session_id")),
        agent_id=agent,
        timestamp=timestamp(f"{where}.timestamp", t.get("timestamp")),
        step_type=kind(f"{where}.trace_type", step_type, ALL_TYPES),
        content=content,
        content_hash=digest,
        parent_trace_id=uuid_text(f"{where}.parent_trace_id", t.get("parent_trace_id")),
        metadata=metadata(f"{where}.metadata", t.get("metadata")),
        importance=importance(f"{where}.importance", t.get("importance"), default=None),
    )


def content_digest(where: str, content: Any) -> tuple[str, int]:
    """content_hash of a content value, refusing non-JSON and oversized content."""
    try:
        data = canonical_bytes(content)
    except (ValueError, UnicodeEncodeError) as exc:
        raise AgentError.invalid(f"{where}.content is not valid JSON: {exc}") from None
    if len(data) > MAX_CONTENT_BYTES:
        raise AgentError.invalid(
            f"{where}.content is {len(data)} bytes of JSON; the limit is {MAX_CONTENT_BYTES}"
        )
    return sha256_hex(data), len(data)


def kind(what: str, value: Any, allowed: frozenset[str] | tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise AgentError.invalid(
            f"{what} {value!r:.40} is not a known type",
            hint="one of: " + ", ".join(sorted(allowed)),
        )
    return value


def uuid_text(what: str, value: Any, *, required: bool = False) -> str | None:
    if value is None:
        if required:
            raise AgentError.invalid(f"{what} is required (a UUID)")
        return None
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise AgentError.invalid(f"{what} must be a UUID, got {value!r:.60}") from None


def timestamp(what: str, value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise AgentError.invalid(
                f"{what} must be an ISO 8601 timestamp, got {value!r:.60}"
            ) from None
    else:
        raise AgentError.invalid(f"{what} must be an ISO 8601 timestamp")
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    # The database keeps microseconds; the hash must see exactly what is stored.
    return parsed.astimezone(dt.UTC)


def metadata(what: str, value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise AgentError.invalid(f"{what} must be a JSON object") from None
    if value is None:
        return None
    if not isinstance(value, dict):
        raise AgentError.invalid(f"{what} must be a JSON object")
    try:
        size = len(canonical_bytes(value))
    except (ValueError, UnicodeEncodeError) as exc:
        raise AgentError.invalid(f"{what} is not valid JSON: {exc}") from None
    if size > MAX_CONTENT_BYTES:
        raise AgentError.invalid(f"{what} is {size} bytes; the limit is {MAX_CONTENT_BYTES}")
    return value


def importance(what: str, value: Any, *, default: float | None) -> float | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AgentError.invalid(f"{what} must be a number between 0 and 1")
    if not 0.0 <= float(value) <= 1.0:
        raise AgentError.invalid(f"{what} must be between 0 and 1, got {value}")
    return float(value)
