"""Branch lifecycle triggers: firing triggers of event_source 'branch_lifecycle'.

A lifecycle trigger (registered with `register_trigger(..., event_source :=
'branch_lifecycle', event_type := ...)` or REST .../triggers/branch-lifecycle) watches
its owner's branches (scope 'agent') or every branch of its org (scope 'org'):

- branch_created: `Branches.create` succeeded;
- merge_requested: a merge of an active branch was asked for (before the approval
  check, so a refused merge is still reported);
- query_count_exceeded: after a branch_query, the branch has run MORE than `threshold`
  queries (counted: branch_query calls that committed);
- storage_exceeded: after a branch_query, the branch holds MORE than `threshold`
  logical bytes (`branch_stats.storage`: its tables and snapshots);
- idle_timeout: the branch has had no create / query for at least `threshold` seconds;
  checked by the branch sweep (every EXPIRY_INTERVAL_S, and whenever branches are
  listed or expired).

The measured events fire once per branch (idle_timeout: once per idle spell, i.e. again
only after new activity). Every fire respects `enabled` and `cooldown_secs` (checked in
the same UPDATE that counts the fire, so it holds across processes and restarts), is
recorded in trigger_fires (source 'branch', source_id the branch id, similarity null)
and performs the trigger's actions like a semantic fire (`trigger_actions.record_fire`;
webhooks in the background through the SSRF guard). A failure here is logged and never
fails the branch operation that caused it.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.branches.store import TABLE as BRANCHES
from proxy.agent.triggers.actions import public, record_fire
from proxy.agent.triggers.args import LIFECYCLE, MEASURED_EVENTS
from proxy.agent.triggers.store import FIRES, TRIGGERS, parsed_json, utc_now
from proxy.db.agent_lake_views import target

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.branch_events")


@dataclass(frozen=True)
class BranchRef:
    """The branch an event is about."""

    org_id: str
    agent_id: str
    branch_id: str
    name: str


def _over(event: str, value: float, threshold: float) -> bool:
    return value >= threshold if event == "idle_timeout" else value > threshold


def _text(event: str, b: BranchRef, value: float | None, threshold: float) -> str:
    what = f"branch '{b.name}' ({b.branch_id})"
    if event == "branch_created":
        return f"{what} was created by agent {b.agent_id}"
    if event == "merge_requested":
        return f"a merge of {what} was requested"
    if event == "query_count_exceeded":
        return f"{what} has run {value:.0f} queries (threshold {threshold:g})"
    if event == "storage_exceeded":
        return f"{what} holds {value:.0f} bytes (threshold {threshold:g})"
    return f"{what} has been idle for {value:.0f} s (threshold {threshold:g})"


async def emit(
    layer: AgentContext,
    branch: BranchRef,
    event: str,
    value: float | None = None,
    *,
    since: dt.datetime | None = None,
    measure: Callable[[], Awaitable[float]] | None = None,
) -> int:
    """Fire the lifecycle triggers watching `branch` for `event`; returns how many fired.

    `value` is the measured figure (or `measure()` computes it, only when some trigger
    listens); `since`: a trigger that already fired for this branch since then does not
    fire again (the once-per-branch / per-idle-spell rule).
    """
    try:
        candidates = await layer.db.run(lambda cur: _candidates(cur, branch, event))
        if not candidates:
            return 0
        if measure is not None:
            value = await measure()
        fired = 0
        for trigger_id, threshold in candidates:
            if event in MEASURED_EVENTS and (value is None or not _over(event, value, threshold)):
                continue
            fired += await fire(layer, trigger_id, branch, event, value, since)
        return fired
    except Exception:  # a lifecycle trigger must never break the branch operation
        log.exception("branch lifecycle event %s of %s failed", event, branch.branch_id)
        return 0


def _candidates(
    cur: duckdb.DuckDBPyConnection, branch: BranchRef, event: str
) -> list[tuple[str, float]]:
    rows = cur.execute(
        f"SELECT id, threshold FROM {TRIGGERS} WHERE org_id = ? AND enabled AND event_source = ? "
        "AND event_type = ? AND (scope = 'org' OR agent_id = ?) ORDER BY created_at",
        [branch.org_id, LIFECYCLE, event, branch.agent_id],
    ).fetchall()
    return [(str(tid), float(threshold)) for tid, threshold in rows]


async def fire(
    layer: AgentContext,
    trigger_id: str,
    branch: BranchRef,
    event: str,
    value: float | None,
    since: dt.datetime | None,
) -> int:
    """Record one fire of `trigger_id` and perform its actions (1), or nothing (0) when it
    is disabled, cooling down, or already fired for this branch since `since`."""
    now, fire_id = utc_now(), str(uuid.uuid4())

    def record(cur: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
        # SELECT, then UPDATE in the same transaction (no RETURNING: with a DuckLake
        # catalog the triggers live in the agent lake, triggers/shared.py); a concurrent
        # fire of the same trigger conflicts on the UPDATE and is run again.
        sql = (
            f"SELECT name, agent_id, threshold, actions, action_config FROM {TRIGGERS} "
            "WHERE id = ? AND enabled AND (last_fired_at IS NULL OR "
            "last_fired_at + to_seconds(cooldown_secs) <= ?)"
        )
        params: list[Any] = [trigger_id, now]
        if since is not None:
            sql += (
                f" AND NOT EXISTS (SELECT 1 FROM {FIRES} WHERE trigger_id = ? "
                "AND source_id = ? AND fired_at >= ?)"
            )
            params += [trigger_id, branch.branch_id, since]
        row = cur.execute(sql, params).fetchone()
        if row is None:
            return None
        cur.execute(
            f"UPDATE {target(TRIGGERS)} SET fire_count = fire_count + 1, last_fired_at = ? "
            "WHERE id = ?",
            [now, trigger_id],
        )
        name, owner, threshold, actions, config = row
        actions, config = parsed_json(actions), parsed_json(config) or {}
        text = _text(event, branch, value, threshold)
        info = {
            "fire_id": fire_id,
            "trigger_id": trigger_id,
            "trigger_name": name,
            "org_id": branch.org_id,
            "agent_id": owner,
            "source": "branch",
            "source_id": branch.branch_id,
            "source_agent_id": branch.agent_id,
            "similarity": None,
            "threshold": threshold,
            "concept": event,
            "input_text": text,
            "fired_at": now.isoformat(),
            "event_type": event,
            "branch_id": branch.branch_id,
            "branch_name": branch.name,
            "value": value,
        }
        details = {"event_type": event, "branch_id": branch.branch_id, "value": value}
        record_fire(
            cur,
            {**info, "fired_at_ts": now},
            actions,
            config,
            event_type=event,
            message=f"Trigger '{name}' fired: {text}",
            details=details,
        )
        return {"fire": public(info), "actions": actions, "config": config}

    done = await layer.triggers._transaction(record)
    if done is None:
        return 0
    layer.triggers.stats["fired"] += 1
    if "webhook" in done["actions"]:
        layer.triggers._spawn_webhook(done["fire"], done["config"])
    return 1


async def sweep_idle(layer: AgentContext, org_id: str | None, agent_id: str | None) -> int:
    """Fire idle_timeout triggers for active branches idle long enough (all, or one agent's)."""
    now = utc_now()

    def load(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        sql = (
            f"SELECT t.id, t.threshold, b.org_id, b.agent_id, b.branch_id, b.name, "
            f"coalesce(b.last_activity_at, b.created_at) FROM {TRIGGERS} t JOIN {BRANCHES} b "
            "ON b.org_id = t.org_id AND (t.scope = 'org' OR t.agent_id = b.agent_id) "
            "WHERE t.enabled AND t.event_source = ? AND t.event_type = 'idle_timeout' "
            "AND b.status = 'active' AND b.expires_at > ?"
        )
        params: list[Any] = [LIFECYCLE, now]
        if org_id is not None and agent_id is not None:
            sql += " AND b.org_id = ? AND b.agent_id = ?"
            params += [org_id, agent_id]
        return cur.execute(sql + " ORDER BY t.created_at", params).fetchall()

    fired = 0
    try:
        for tid, threshold, org, agent, bid, name, since in await layer.db.run(load):
            idle = (now - since).total_seconds()
            if _over("idle_timeout", idle, threshold):
                ref = BranchRef(org, agent, bid, name)
                fired += await fire(layer, str(tid), ref, "idle_timeout", idle, since)
    except Exception:
        log.exception("the idle branch sweep failed")
    return fired
