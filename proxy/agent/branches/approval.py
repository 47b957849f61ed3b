"""Merge approvals on a branch: the latest approve / reject decision, and what it blocks.

A decision is recorded from a reasoning-session context (REST POST
/v1/cot/sessions/{id}/merge-approval, which also writes the CoT ledger's approval).
The branch keeps the latest decision (approval_decision / _by / _at / _reason /
_session_id) and every decision as an audit entry (`branch_audit`). A branch whose
latest decision is "reject" refuses to merge over every interface (SQLSTATE 55000,
REST 409, code merge_rejected) until a later "approve"; "approve" does not merge by
itself, and a branch with no decision merges as before.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.branches.store import TABLE, audit
from proxy.core.errors import AgentError

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

DECISIONS = ("approve", "reject")


def check_mergeable(cur: duckdb.DuckDBPyConnection, branch_id: str, actor: str | None) -> None:
    """Refuse (and audit) a merge of a branch whose latest decision is reject."""
    row = cur.execute(
        f"SELECT approval_decision, approval_by, approval_at, approval_reason, "
        f"approval_session_id FROM {TABLE} WHERE branch_id = ?",
        [branch_id],
    ).fetchone()
    if row is None or row[0] != "reject":
        return
    _, by, at, reason, session = row
    audit(cur, branch_id, "merge_refused", actor, {"rejected_by": by, "session_id": session})
    message = f"branch {branch_id} cannot be merged: its merge was rejected by {by}"
    if at is not None:
        message += f" at {at.isoformat(timespec='seconds')}"
    if reason:
        message += f" ({reason})"
    raise AgentError(
        "merge_rejected",
        message,
        sqlstate="55000",
        http_status=409,
        hint="a later approve decision (POST /v1/cot/sessions/{session_id}/merge-approval) "
        "allows the merge",
    )


async def decide(
    layer: AgentContext,
    org_id: str,
    branch_id: str,
    decision: str,
    *,
    reviewer: str,
    reason: str | None,
    session_id: str,
    approval_id: str | None,
    refs: list[str],
) -> None:
    """Record `decision` as the branch's latest and in its audit trail (active branches)."""
    if decision not in DECISIONS:
        raise AgentError.invalid(f"decision must be 'approve' or 'reject', got {decision!r:.40}")
    now = dt.datetime.now(dt.UTC)

    def work(cur: duckdb.DuckDBPyConnection) -> None:
        _open(cur, org_id, branch_id)
        cur.execute(
            f"UPDATE {TABLE} SET approval_decision = ?, approval_by = ?, approval_at = ?, "
            "approval_reason = ?, approval_session_id = ? WHERE branch_id = ?",
            [decision, reviewer, now, reason, session_id, branch_id],
        )
        details: dict[str, Any] = {
            "session_id": session_id,
            "cot_approval_id": approval_id,
            "reason": reason,
            "cot_step_references": refs,
        }
        audit(
            cur, branch_id, "approved" if decision == "approve" else "rejected", reviewer, details
        )

    await layer.db.transaction(work)


async def ensure_open(layer: AgentContext, org_id: str, branch_id: str) -> None:
    """404 unless the branch is the org's; 409 unless it is still active (nothing to decide)."""
    await layer.db.run(lambda cur: _open(cur, org_id, branch_id))


def _open(cur: duckdb.DuckDBPyConnection, org_id: str, branch_id: str) -> None:
    row = cur.execute(
        f"SELECT status FROM {TABLE} WHERE branch_id = ? AND org_id = ?", [branch_id, org_id]
    ).fetchone()
    if row is None:
        raise AgentError.not_found(f"branch {branch_id} does not exist")
    if row[0] != "active":
        raise AgentError.conflict(f"branch {branch_id} is {row[0]}: there is no merge to decide")
