"""Triggers over one DuckLake: a trigger fires once per event, not once per proxy.

With `lake_catalog` set the trigger tables live in the agent lake (store.install ->
proxy/db/agent_lake_views.py): a trigger registered through any proxy is evaluated by
every proxy, and its fires, events, review flags, inbox messages and webhook deliveries
are read the same on all. The proxy that stores a memory or a reasoning step evaluates
it (memories applied from other proxies are not evaluated again), so each event is
normally evaluated once; the claim below makes "once" hold when it is not (a client
retrying through another proxy, an evaluation run again after a conflict).

The claim is the fire row itself, written in one lake transaction that first updates
the trigger's row (fire_count + 1, last_fired_at): two proxies firing one trigger at
once conflict at commit (40001); the loser runs the transaction again, now finds the
winner's fire for the same (trigger, source, source_id) - or the winner's cooldown - and
skips. The cooldown is so shared too: it is read from the lake row, not from memory.
"""

from __future__ import annotations

import datetime as dt

import duckdb

from proxy.agent.triggers.store import FIRES, TRIGGERS
from proxy.db.agent_lake_views import target


def claim(
    cur: duckdb.DuckDBPyConnection,
    trigger_id: str,
    source: str,
    source_id: str,
    now: dt.datetime,
) -> tuple | None:
    """Inside the fire's transaction: the trigger's (name, agent_id, threshold, actions,
    action_config, concept) when this proxy may fire it for this event, after moving its
    fire_count and last_fired_at; None when it is gone or disabled, cooling down, or
    already fired for this event (by any proxy)."""
    row = cur.execute(
        f"SELECT name, agent_id, threshold, actions, action_config, concept, last_fired_at, "
        f"cooldown_secs FROM {TRIGGERS} WHERE id = ? AND enabled",
        [trigger_id],
    ).fetchone()
    if row is None:
        return None
    last, cooldown = row[6], row[7]
    if last is not None and (now - last).total_seconds() < cooldown:
        return None
    fired = cur.execute(
        f"SELECT 1 FROM {FIRES} WHERE trigger_id = ? AND source = ? AND source_id = ? LIMIT 1",
        [trigger_id, source, source_id],
    ).fetchone()
    if fired is not None:
        return None
    # The row every proxy firing this trigger updates: the conflict that makes it once.
    cur.execute(
        f"UPDATE {target(TRIGGERS)} SET fire_count = fire_count + 1, last_fired_at = ? "
        "WHERE id = ?",
        [now, trigger_id],
    )
    return row[:6]


def claim_unshared(
    cur: duckdb.DuckDBPyConnection, trigger_id: str, now: dt.datetime
) -> tuple | None:
    """The single-file path: one statement (the process's own cooldown was checked)."""
    return cur.execute(
        f"UPDATE {TRIGGERS} SET fire_count = fire_count + 1, last_fired_at = ? "
        "WHERE id = ? AND enabled RETURNING name, agent_id, threshold, actions, "
        "action_config, concept",
        [now, trigger_id],
    ).fetchone()
