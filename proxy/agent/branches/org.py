"""Organisation-wide branch reads for the REST control plane.

The branch agent functions act as the owning agent (a branch belongs to the agent that
created it). An org-level API key on REST sees every branch of its org: these helpers
list them, find a branch's owner (so merge / discard run through the same agent
functions as that owner), and compute the figures of one branch (diff, conflicts,
cost) or of the org (analytics). `agent_id` narrows a helper to one agent's branches
(agent-bound keys); another org's or agent's branch is not found.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.branches import stats as branch_stats
from proxy.agent.branches.args import resolve
from proxy.agent.branches.store import AUDIT, TABLE, copied_list
from proxy.core.errors import AgentError

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

_FIELDS = (
    "branch_id, org_id, agent_id, name, description, schema_name, status, created_at, "
    "expires_at, merged_at, ended_at, strategy, base_tables, tables_copied, merge_report, "
    "query_count, query_ms, last_activity_at, approval_decision, approval_by, approval_at, "
    "approval_reason, approval_session_id"
)
_NAMES = [n.strip() for n in _FIELDS.split(",")]


def _scope(org_id: str, agent_id: str | None) -> tuple[str, list[Any]]:
    if agent_id is None:
        return "org_id = ?", [org_id]
    return "org_id = ? AND agent_id = ?", [org_id, agent_id]


def _json(raw: Any) -> Any:
    return json.loads(raw) if isinstance(raw, str) else raw


def _doc(row: tuple) -> dict[str, Any]:
    """A branch as REST shows it (the SDK reads `id`)."""
    r = dict(zip(_NAMES, row, strict=True))
    copied = copied_list(r["tables_copied"])
    approval = None
    if r["approval_decision"] is not None:
        approval = {
            "decision": r["approval_decision"],
            "decided_by": r["approval_by"],
            "decided_at": r["approval_at"],
            "reason": r["approval_reason"],
            "session_id": r["approval_session_id"],
        }
    return {
        "id": r["branch_id"],
        "branch_id": r["branch_id"],
        "org_id": r["org_id"],
        "agent_id": r["agent_id"],
        "name": r["name"],
        "description": r["description"] or None,
        "schema_name": r["schema_name"],
        "status": r["status"],
        "created_at": r["created_at"],
        "expires_at": r["expires_at"],
        "merged_at": r["merged_at"],
        "ended_at": r["ended_at"],
        "strategy": r["strategy"],
        "tables": list(_json(r["base_tables"]) or []),
        "tables_copied": [
            {"table": c["table"], "kept": c.get("kept"), "copied_at": c.get("copied_at")}
            for c in copied
        ],
        "query_count": int(r["query_count"] or 0),
        "last_activity_at": r["last_activity_at"] or r["created_at"],
        "approval": approval,
        "merge_report": _json(r["merge_report"]),
    }


def _select(cur: duckdb.DuckDBPyConnection, where: str, params: list[Any]) -> list[tuple]:
    return cur.execute(
        f"SELECT {_FIELDS} FROM {TABLE} WHERE {where} ORDER BY created_at, branch_id", params
    ).fetchall()


async def list_branches(
    layer: AgentContext, org_id: str, agent_id: str | None = None, status: str | None = None
) -> list[dict[str, Any]]:
    """Every branch of the org (or of one agent), oldest first; overdue ones expired first."""
    await layer.branches.expire(None)
    where, params = _scope(org_id, agent_id)
    if status is not None:
        where, params = where + " AND status = ?", [*params, status]
    return [_doc(r) for r in await layer.branches.db.run(lambda cur: _select(cur, where, params))]


async def owner(
    layer: AgentContext, org_id: str, branch_id: Any, agent_id: str | None = None
) -> tuple[str, str]:
    """(branch id, owning agent) of a branch of the org, named by id or name (see
    args.resolve; a name shared by several agents' branches is ambiguous); not_found
    otherwise."""
    where, params = _scope(org_id, agent_id)

    def work(cur: duckdb.DuckDBPyConnection) -> tuple[str, str]:
        bid = resolve(cur, branch_id, where, params)
        (agent,) = cur.execute(
            f"SELECT agent_id FROM {TABLE} WHERE branch_id = ?", [bid]
        ).fetchone()
        return bid, agent

    return await layer.branches.db.run(work)


async def get(layer: AgentContext, org_id: str, branch_id: str) -> dict[str, Any]:
    """One branch with its audit trail (oldest entry first)."""

    def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        rows = _select(cur, "branch_id = ? AND org_id = ?", [branch_id, org_id])
        if not rows:
            raise AgentError.not_found(f"branch {branch_id} does not exist")
        doc = _doc(rows[0])
        audit = cur.execute(
            f"SELECT event, actor, details, created_at FROM {AUDIT} WHERE branch_id = ? "
            "ORDER BY created_at, id",
            [branch_id],
        ).fetchall()
        doc["audit"] = [
            {"event": e, "actor": a, "details": _json(d) or {}, "created_at": t}
            for e, a, d, t in audit
        ]
        return doc

    return await layer.branches.db.run(work)


def _load_active(cur: duckdb.DuckDBPyConnection, org_id: str, branch_id: str) -> dict[str, Any]:
    rows = _select(cur, "branch_id = ? AND org_id = ?", [branch_id, org_id])
    if not rows:
        raise AgentError.not_found(f"branch {branch_id} does not exist")
    r = dict(zip(_NAMES, rows[0], strict=True))
    if r["status"] != "active" or r["expires_at"] <= dt.datetime.now(dt.UTC):
        raise AgentError.conflict(
            f"branch {branch_id} is {r['status']}: its tables are gone, there is nothing to compare"
        )
    r["tables_copied"] = copied_list(r["tables_copied"])
    return r


async def diff(layer: AgentContext, org_id: str, branch_id: str) -> dict[str, Any]:
    """Rows changed per table, in the branch and in main, since the branch copied them."""

    def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        branch = _load_active(cur, org_id, branch_id)
        tables = branch_stats.diff(cur, branch)
        copied = {t["table"].lower() for t in tables}
        live = [t for t in _json(branch["base_tables"]) or [] if t.lower() not in copied]
        total = {"added": 0, "removed": 0, "changed": 0}
        for t in tables:
            for k in total:
                total[k] += (t["branch"] or {}).get(k) or 0
        return {
            "branch_id": branch_id,
            "status": branch["status"],
            "tables": tables,
            "unchanged_tables": live,
            "rows_added": total["added"],
            "rows_removed": total["removed"],
            "rows_changed": total["changed"],
        }

    # One transaction: every count is taken from the same state of the database.
    return await layer.branches.db.transaction(work)


async def conflicts(layer: AgentContext, org_id: str, branch_id: str) -> dict[str, Any]:
    """Keys changed both in the branch and in main since the copy, per table."""

    def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        branch = _load_active(cur, org_id, branch_id)
        tables = branch_stats.conflicts(cur, branch)
        count = sum(t["conflict_count"] or 0 for t in tables)
        return {
            "branch_id": branch_id,
            "has_conflicts": count > 0,
            "conflict_count": count,
            "tables": tables,
        }

    return await layer.branches.db.transaction(work)


def _seconds(later: dt.datetime, earlier: dt.datetime | None) -> float | None:
    return None if earlier is None else max(0.0, (later - earlier).total_seconds())


async def cost(layer: AgentContext, org_id: str, branch_id: str) -> dict[str, Any]:
    """What the branch holds (rows, logical bytes) and has used (queries, time)."""

    def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        rows = _select(cur, "branch_id = ? AND org_id = ?", [branch_id, org_id])
        if not rows:
            raise AgentError.not_found(f"branch {branch_id} does not exist")
        r = dict(zip(_NAMES, rows[0], strict=True))
        active = r["status"] == "active"
        size = (
            branch_stats.storage(cur, r["schema_name"])
            if active
            else {"tables": 0, "rows": 0, "data_bytes": 0, "snapshot_bytes": 0}
        )
        now = dt.datetime.now(dt.UTC)
        end = now if active else (r["ended_at"] or now)
        last = r["last_activity_at"] or r["created_at"]
        return {
            "branch_id": branch_id,
            "status": r["status"],
            "tables": size["tables"],
            "tables_copied": len(copied_list(r["tables_copied"])),
            "rows": size["rows"],
            "data_bytes": size["data_bytes"],
            "snapshot_bytes": size["snapshot_bytes"],
            "storage_bytes": size["data_bytes"] + size["snapshot_bytes"],
            "query_count": int(r["query_count"] or 0),
            "query_time_ms": float(r["query_ms"] or 0.0),
            "created_at": r["created_at"],
            "last_activity_at": last,
            "age_seconds": _seconds(end, r["created_at"]),
            "idle_seconds": _seconds(end, last),
            "expires_at": r["expires_at"],
            "ttl_remaining_seconds": _seconds(r["expires_at"], now) if active else None,
            "estimated_cost_usd": None,
        }

    return await layer.branches.db.transaction(work)


async def analytics(layer: AgentContext, org_id: str, agent_id: str | None) -> dict[str, Any]:
    """Branch counts, usage, outcomes and current storage of the org (or one agent)."""
    await layer.branches.expire(None)
    where, params = _scope(org_id, agent_id)

    def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        by_status = dict(
            cur.execute(
                f"SELECT status, count(*) FROM {TABLE} WHERE {where} GROUP BY status", params
            ).fetchall()
        )
        total, agents, queries, query_ms, lifetime, approved, rejected = cur.execute(
            f"SELECT count(*), count(DISTINCT agent_id), coalesce(sum(query_count), 0), "
            "coalesce(sum(query_ms), 0), avg(epoch(ended_at) - epoch(created_at)) "
            "FILTER (WHERE ended_at IS NOT NULL), "
            "count(*) FILTER (WHERE approval_decision = 'approve'), "
            f"count(*) FILTER (WHERE approval_decision = 'reject') FROM {TABLE} WHERE {where}",
            params,
        ).fetchone()
        refused = cur.execute(
            f"SELECT count(*) FROM {AUDIT} WHERE event = 'merge_refused' AND {where}", params
        ).fetchone()[0]
        rows = storage = 0
        for (schema,) in cur.execute(
            f"SELECT schema_name FROM {TABLE} WHERE status = 'active' AND {where}", params
        ).fetchall():
            size = branch_stats.storage(cur, schema)
            rows += size["rows"]
            storage += size["data_bytes"] + size["snapshot_bytes"]
        merged = by_status.get("merged", 0)
        ended = merged + by_status.get("discarded", 0) + by_status.get("expired", 0)
        return {
            "org_id": org_id,
            "agent_id": agent_id,
            "total": total,
            "by_status": {
                s: by_status.get(s, 0) for s in ("active", "merged", "discarded", "expired")
            },  # fmt: skip
            "agents": agents,
            "query_count": int(queries),
            "query_time_ms": float(query_ms),
            "merge_rate": merged / ended if ended else None,
            "avg_lifetime_seconds": None if lifetime is None else float(lifetime),
            "latest_decisions": {"approve": approved, "reject": rejected},
            "merges_refused": refused,
            "active_rows": rows,
            "active_storage_bytes": storage,
        }

    return await layer.branches.db.transaction(work)
