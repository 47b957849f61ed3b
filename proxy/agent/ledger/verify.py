"""Chain verification and the JSON documents of the ledger (pure functions, no I/O).

`verify_steps` walks a session's stored steps in step_index order and names the first
broken one; `check_org` then compares them with what the organisation chain recorded
for the session (`orgchain.py`): a deleted session, missing last steps, a step edited
with every hash recomputed, or steps the ledger never appended. The `*_document` helpers turn the rows of the registered SQL functions into
the documents the MCP tools and the REST API return (seed 001 shapes):

- `replay_document(rows)`  -> `{session_id, agent_id, steps, step_count, total_steps,
  chain_valid}` (MCP `replay_decision`, REST `GET /v1/cot/sessions/{id}/replay`);
- `verify_document(row)`   -> `{session_id, chain_valid, total_traces, invalid_hashes,
  first_broken_step, first_broken_trace_id, reason}`;
- `ingest_document(rows)`  -> `{ingested, skipped, trace_ids}`;
- `ledger_document(rows)`  -> `{ledger_valid, summary, problems}` (`verify_ledger`);
- `approval_document(row)` -> `{id, decision, session_id, agent_id, trace_id, reason,
  reviewed_by, created_at}`;
- `export_session` already returns the whole document in its `document` column.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from proxy.agent.ledger.hashing import GENESIS_HASH, chain_hash, content_hash
from proxy.agent.ledger.orgchain import entry_hash


@dataclass
class Verification:
    chain_valid: bool = True
    total_traces: int = 0
    first_broken_step: int | None = None
    first_broken_trace_id: str | None = None
    reason: str | None = None
    # One entry per failed check: {step_index, trace_id, field, problem}.
    invalid_hashes: list[dict[str, Any]] = field(default_factory=list)
    bad_steps: set[int] = field(default_factory=set)

    def fail(self, step: int, trace_id: str | None, what: str, problem: str) -> None:
        # The earliest broken step is the one named, whichever check found it first.
        first = self.first_broken_step
        if self.chain_valid or (first is not None and step < first):
            self.chain_valid = False
            self.first_broken_step = step
            self.first_broken_trace_id = trace_id
            self.reason = problem
        self.invalid_hashes.append(
            {"step_index": step, "trace_id": trace_id, "field": what, "problem": problem}
        )
        self.bad_steps.add(step)

    def as_dict(self) -> dict[str, Any]:
        return {
            "chain_valid": self.chain_valid,
            "total_traces": self.total_traces,
            "first_broken_step": self.first_broken_step,
            "first_broken_trace_id": self.first_broken_trace_id,
            "reason": self.reason,
            "invalid_hashes": self.invalid_hashes,
        }


def verify_steps(steps: list[dict[str, Any]], head: dict[str, Any] | None) -> Verification:
    """Check every link of one session's chain.

    steps: stored rows (see `Ledger._load`), any order; head: the session record
    (`total_steps`, `head_hash`) kept beside the chain, so that deleting the last
    steps is detected too. The first failure found in step order is the one named.
    """
    out = Verification(total_traces=len(steps))
    steps = sorted(steps, key=lambda s: s["step_index"])
    expected_index = 0
    prev = GENESIS_HASH
    for s in steps:
        index, tid = s["step_index"], s["trace_id"]
        if index > expected_index:
            missing = (
                f"step {expected_index} is missing"
                if index == expected_index + 1
                else f"step {expected_index} to step {index - 1} are missing"
            )
            out.fail(expected_index, None, "step_index", f"{missing} (next stored step: {index})")
        elif index < expected_index:
            out.fail(index, tid, "step_index", f"step {index} is stored twice or out of order")
        try:
            computed = content_hash(s["content"])
        except ValueError:
            computed = None
        if computed != s["content_hash"]:
            out.fail(
                index, tid, "content_hash", f"step {index}: content does not match content_hash"
            )
        if s["prev_hash"] != prev:
            out.fail(
                index,
                tid,
                "prev_hash",
                f"step {index}: prev_hash does not match the chain_hash of the step before it",
            )
        if _chain(s) != s["chain_hash"]:
            out.fail(
                index, tid, "chain_hash", f"step {index}: chain_hash does not match its fields"
            )
        prev = s["chain_hash"]  # keep walking from the stored hash: one edit, one report
        expected_index = max(expected_index, index + 1)
    if head is None:
        if steps:
            out.fail(expected_index, None, "session", "the session record is missing")
        return out
    total = head["total_steps"]
    if total > expected_index:
        out.fail(
            expected_index,
            None,
            "step_index",
            f"step {expected_index} and later are missing "
            f"(the session recorded {total} steps, {expected_index} are stored)",
        )
    elif total < expected_index:
        out.fail(total, None, "session", f"the session recorded {total} steps, found more")
    elif head["head_hash"] != prev:
        last = expected_index - 1
        out.fail(last, None, "chain_hash", f"step {last}: the session's head hash differs")
    return out


def check_org(out: Verification, steps: list[dict[str, Any]], entries: list[dict[str, Any]]):
    """Add to `out` where a session's stored steps differ from its organisation chain
    entries (`orgchain.session_entries`): every recorded step must be stored as recorded
    (same trace, same chain_hash) and every stored step must be recorded."""
    if not entries:
        if steps:
            first = min(steps, key=lambda s: s["step_index"])
            out.fail(
                first["step_index"],
                first["trace_id"],
                "org_chain",
                f"the session is not in the organisation chain: its {len(steps)} stored "
                "step(s) were not appended by the ledger",
            )
        return
    if not steps:
        seqs = sorted(e["seq"] for e in entries)
        out.fail(
            0,
            None,
            "session",
            f"the session was deleted: the organisation chain recorded {len(entries)} "
            f"step(s) (seq {seqs[0]} to {seqs[-1]}), none is stored",
        )
        return
    stored = {s["step_index"]: s for s in steps}
    recorded: set[int] = set()
    for e in entries:
        index, seq = e["step_index"], e["seq"]
        recorded.add(index)
        intact = e["intact"] if "intact" in e else entry_hash(e) == e["org_hash"]
        if not intact:
            out.fail(
                index,
                e["trace_id"],
                "org_chain",
                f"step {index}: its organisation chain entry (seq {seq}) was altered",
            )
        s = stored.get(index)
        if s is None:
            out.fail(
                index,
                e["trace_id"],
                "org_chain",
                f"step {index} is missing (the organisation chain recorded it at seq {seq})",
            )
        elif s["trace_id"] != e["trace_id"] or s["chain_hash"] != e["step_hash"]:
            out.fail(
                index,
                s["trace_id"],
                "org_chain",
                f"step {index} is not the step the organisation chain recorded at seq {seq}",
            )
    for index, s in sorted(stored.items()):
        if index not in recorded:
            out.fail(
                index,
                s["trace_id"],
                "org_chain",
                f"step {index} is not in the organisation chain (not appended by the ledger)",
            )


def decode_step(r: dict[str, Any]) -> dict[str, Any]:
    """A stored step row as verify reads it: JSON parsed, ids as text, timestamps UTC."""
    r = dict(r)
    r["trace_id"] = str(r["trace_id"])
    r["parent_trace_id"] = None if r["parent_trace_id"] is None else str(r["parent_trace_id"])
    r["content"] = _json(r["content"])
    r["metadata"] = None if r["metadata"] is None else _json(r["metadata"])
    ts = r["timestamp"]
    if isinstance(ts, dt.datetime):
        r["timestamp"] = ts.astimezone(dt.UTC) if ts.tzinfo else ts.replace(tzinfo=dt.UTC)
    return r


def _json(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text  # an edited row that no longer parses: verify will flag it


def _chain(s: dict[str, Any]) -> str | None:
    try:
        return chain_hash(
            prev_hash=s["prev_hash"],
            content_hash=s["content_hash"],
            org_id=s["org_id"],
            agent_id=s["agent_id"],
            session_id=s["session_id"],
            step_index=s["step_index"],
            step_type=s["step_type"],
            timestamp=s["timestamp"],
            trace_id=s["trace_id"],
            parent_trace_id=s["parent_trace_id"],
            metadata=s["metadata"],
            importance=s["importance"],
        )
    except (ValueError, TypeError, AttributeError):
        return None


def iso(value: Any) -> Any:
    """Timestamps in documents: ISO 8601 UTC with `Z`."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    return value


def step_document(row: dict[str, Any]) -> dict[str, Any]:
    """One step as JSON: `step_type` (MCP) and `trace_type` (REST) carry the same value."""
    return {
        "trace_id": _str(row.get("trace_id")),
        "step_index": row.get("step_index"),
        "step_type": row.get("step_type"),
        "trace_type": row.get("step_type"),
        "content": row.get("content"),
        "metadata": row.get("metadata"),
        "importance": row.get("importance"),
        "timestamp": iso(row.get("timestamp")),
        "parent_trace_id": _str(row.get("parent_trace_id")),
        "content_hash": row.get("content_hash"),
        "prev_hash": row.get("prev_hash"),
        "chain_hash": row.get("chain_hash"),
    }


def replay_document(rows: list[dict[str, Any]], session_id: str | None = None) -> dict[str, Any]:
    """Rows of `replay_decision` -> the MCP / REST replay document."""
    first = rows[0] if rows else {}
    return {
        "session_id": first.get("session_id", session_id),
        "agent_id": first.get("agent_id"),
        "steps": [step_document(r) for r in rows],
        "step_count": len(rows),
        "total_steps": len(rows),
        "chain_valid": first.get("chain_valid"),
    }


def verify_document(row: dict[str, Any]) -> dict[str, Any]:
    """The row of `verify_chain` -> the REST verify document."""
    return {
        "session_id": row["session_id"],
        "agent_id": row.get("agent_id"),
        "chain_valid": row["chain_valid"],
        "total_traces": row["total_traces"],
        "invalid_hashes": row["invalid_hashes"],
        "first_broken_step": row.get("first_broken_step"),
        "first_broken_trace_id": _str(row.get("first_broken_trace_id")),
        "reason": row.get("reason"),
    }


def ledger_document(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows of `verify_ledger` -> `{ledger_valid, summary, problems}` (MCP and REST)."""
    last = rows[-1]
    totals = ("sessions_checked", "steps_checked", "org_chain_length", "org_head_hash")
    problem = ("kind", "session_id", "agent_id", "step_index", "seq", "trace_id", "reason")
    return {
        "ledger_valid": last["ledger_valid"],
        "summary": {"reason": last["reason"], **{k: last[k] for k in totals}},
        "problems": [
            {k: _str(r[k]) if k == "trace_id" else r[k] for k in problem} for r in rows[:-1]
        ],
    }


def ingest_document(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows of `ingest_traces` -> REST `{ingested, skipped, trace_ids}` (all ids, in order)."""
    return {
        "ingested": sum(1 for r in rows if r["status"] == "ingested"),
        "skipped": sum(1 for r in rows if r["status"] == "duplicate"),
        "trace_ids": [_str(r["trace_id"]) for r in rows],
    }


def approval_document(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": _str(row["id"]),
        "decision": row["decision"],
        "session_id": row["session_id"],
        "agent_id": row.get("agent_id"),
        "trace_id": _str(row.get("trace_id")),
        "reason": row.get("reason"),
        "reviewed_by": row.get("reviewed_by"),
        "created_at": iso(row.get("created_at")),
    }


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
