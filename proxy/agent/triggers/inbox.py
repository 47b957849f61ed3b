"""The agent_inbox agent function: an agent's agent_notify messages, newest first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.triggers.store import INBOX, parsed_json, utc_now, uuids_as_text
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import Param, agent_function
from proxy.db.agent_lake_views import target

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext


INBOX_COLUMNS = (
    ("id", "UUID"),
    ("agent_id", "VARCHAR"),
    ("kind", "VARCHAR"),
    ("trigger_id", "UUID"),
    ("trigger_name", "VARCHAR"),
    ("fire_id", "UUID"),
    ("from_agent_id", "VARCHAR"),
    ("source", "VARCHAR"),
    ("source_id", "VARCHAR"),
    ("similarity", "DOUBLE"),
    ("message", "VARCHAR"),
    ("payload", "JSON"),
    ("created_at", "TIMESTAMPTZ"),
    ("read_at", "TIMESTAMPTZ"),
    ("read", "BOOLEAN"),
)


@agent_function(
    "agent_inbox",
    params=[
        Param("unread_only", "BOOLEAN", False, "Only notifications not read yet"),
        Param("mark_read", "BOOLEAN", False, "Mark the returned notifications read"),
        Param("limit", "BIGINT", 100, "Most notifications to return", minimum=1),
    ],
    columns=INBOX_COLUMNS,
    scope="trigger:read",
)
async def agent_inbox(
    layer: AgentContext, who: Identity, *, unread_only: Any, mark_read: Any, limit: Any
):
    """The caller's notifications (agent_notify), newest first; mark_read marks those returned."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise AgentError.invalid(f"limit must be a positive integer, got {limit!r}")
    cols = [c for c, _ in INBOX_COLUMNS if c != "read"]
    now = utc_now()

    def load(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
        rows = cur.execute(
            f"SELECT {', '.join(cols)} FROM {INBOX} WHERE org_id = ? AND agent_id = ? "
            f"{'AND read_at IS NULL' if unread_only else ''} ORDER BY created_at DESC LIMIT ?",
            [who.org_id, who.agent_id, min(limit, 10_000)],
        ).fetchall()
        out = [dict(zip(cols, r, strict=True)) for r in rows]
        unread = [str(r["id"]) for r in out if r["read_at"] is None]
        if mark_read and unread:
            # Bookkeeping only (like access counts): the caller's own inbox rows.
            cur.execute(
                f"UPDATE {target(INBOX)} SET read_at = ? WHERE org_id = ? AND agent_id = ? "
                "AND read_at IS NULL AND list_contains(?, CAST(id AS VARCHAR))",
                [now, who.org_id, who.agent_id, unread],
            )
            for r in out:
                r["read_at"] = r["read_at"] or now
        return out

    rows = await layer.db.transaction(load)
    for r in rows:
        r["payload"] = parsed_json(r["payload"])
        r["read"] = r["read_at"] is not None
    return [uuids_as_text(r) for r in rows]
