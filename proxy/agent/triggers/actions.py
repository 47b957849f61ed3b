"""Recording one trigger fire and performing its in-database actions.

Shared by the semantic evaluator (`proxy.agent.triggers.evaluate`) and branch lifecycle
triggers (`proxy.agent.branches.events`), so a fire looks the same whatever caused it:
a row in trigger_fires, then write_event (trigger_events), flag_for_review
(trigger_review_flags) and agent_notify (agent_inbox) in the caller's transaction.
The webhook action is not performed here: it is POSTed afterwards in the background
(`Triggers._spawn_webhook`), because it must never hold a transaction open.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import duckdb

from proxy.agent.triggers.store import EVENTS, FIRES, FLAGS, INBOX
from proxy.db.agent_lake_views import target


def record_fire(
    cur: duckdb.DuckDBPyConnection,
    fire: dict[str, Any],
    actions: list[str],
    config: dict[str, Any],
    *,
    event_type: str = "trigger_fired",
    message: str,
    details: dict[str, Any] | None = None,
) -> None:
    """Insert the fire row of `fire` (see trigger_eval._fire for its keys) and its actions.

    `event_type` is the trigger_events row's type; `message` the agent_inbox text.
    """
    now = fire["fired_at_ts"]
    webhook = "webhook" in actions
    cur.execute(
        f"INSERT INTO {target(FIRES)} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [fire["fire_id"], fire["trigger_id"], fire["trigger_name"], fire["org_id"],
         fire["agent_id"], fire["source"], fire["source_id"], fire["source_agent_id"],
         fire["similarity"], fire["threshold"], fire["input_text"], ",".join(actions),
         "pending" if webhook else "done", json.dumps({"actions": actions, **(details or {})}),
         now],
    )  # fmt: skip
    payload = json.dumps(public(fire), default=str)
    if "write_event" in actions:
        cur.execute(
            f"INSERT INTO {target(EVENTS)} VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [str(uuid.uuid4()), fire["org_id"], fire["agent_id"], fire["trigger_id"],
             fire["fire_id"], event_type, payload, now],
        )  # fmt: skip
    if "flag_for_review" in actions:
        cur.execute(
            f"INSERT INTO {target(FLAGS)} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)",
            [str(uuid.uuid4()), fire["org_id"], fire["agent_id"], fire["trigger_id"],
             fire["trigger_name"], fire["fire_id"], fire["source"], fire["source_id"],
             fire["source_agent_id"], fire["similarity"], fire["input_text"], now],
        )  # fmt: skip
    if "agent_notify" in actions:
        recipient = config.get("agent_id") or fire["agent_id"]
        cur.execute(
            f"INSERT INTO {target(INBOX)} VALUES "
            "(?, ?, ?, 'trigger_fired', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
            [str(uuid.uuid4()), fire["org_id"], recipient, fire["trigger_id"],
             fire["trigger_name"], fire["fire_id"], fire["agent_id"], fire["source"],
             fire["source_id"], fire["similarity"], message, payload, now],
        )  # fmt: skip


def public(fire: dict[str, Any]) -> dict[str, Any]:
    """The fire as events, inbox payloads and webhooks carry it (no internal keys)."""
    return {k: v for k, v in fire.items() if k != "fired_at_ts"}
