"""Organisation-wide trigger reads for the REST control plane.

The trigger agent functions act as the owning agent (a trigger belongs to the agent
that registered it). An org-level API key on REST manages every trigger of its org:
these helpers list them, find a trigger's owner (so update / delete / test / re-embed
run through the same agent functions as that owner) and read a trigger's fire history
across the org. `agent_id` narrows a helper to one agent's triggers (agent-bound keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.agent.triggers.store import (
    FIRES,
    TRIGGER_FIELDS,
    TRIGGERS,
    parsed_json,
    resolve,
    trigger_row,
)
from proxy.core.errors import AgentError

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext

FIRE_FIELDS = (
    "id, trigger_id, trigger_name, org_id, agent_id, source, source_id, source_agent_id, "
    "similarity, threshold, input_text, action_taken, status, details, fired_at"
)


def _scope(org_id: str, agent_id: str | None) -> tuple[str, list[Any]]:
    if agent_id is None:
        return "org_id = ?", [org_id]
    return "org_id = ? AND agent_id = ?", [org_id, agent_id]


async def list_triggers(
    layer: AgentContext, org_id: str, agent_id: str | None = None
) -> list[dict[str, Any]]:
    """Every trigger of the org (or of one agent), oldest first."""
    where, params = _scope(org_id, agent_id)

    def q(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
        cur.execute(
            f"SELECT {TRIGGER_FIELDS} FROM {TRIGGERS} WHERE {where} ORDER BY created_at, name, id",
            params,
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    return [trigger_row(r) for r in await layer.db.run(q)]


async def owner(
    layer: AgentContext, org_id: str, trigger_id: Any, agent_id: str | None = None
) -> tuple[str, str]:
    """(trigger id, owning agent) of a trigger in the org, named by its id or its name (a
    name several agents use is ambiguous, see store.resolve); not_found otherwise."""
    where, params = _scope(org_id, agent_id)

    def work(cur: duckdb.DuckDBPyConnection) -> tuple[str, str]:
        tid = resolve(cur, trigger_id, where, params)
        (agent,) = cur.execute(f"SELECT agent_id FROM {TRIGGERS} WHERE id = ?", [tid]).fetchone()
        return tid, agent

    return await layer.db.run(work)


async def action_config(layer: AgentContext, trigger_id: str) -> dict[str, Any]:
    """A trigger's stored action_config, unredacted (to change one key of it)."""
    row = await layer.db.run(
        lambda cur: cur.execute(
            f"SELECT action_config FROM {TRIGGERS} WHERE id = ?", [trigger_id]
        ).fetchone()
    )
    return dict(parsed_json(row[0]) or {}) if row is not None else {}


async def fires(
    layer: AgentContext, org_id: str, trigger_id: str, limit: int = 100
) -> list[dict[str, Any]]:
    """Fire events of one trigger of the org, newest first (any agent's content)."""
    if limit < 1:
        raise AgentError.invalid("limit must be at least 1")
    names = [n.strip() for n in FIRE_FIELDS.split(",")]

    def q(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        return cur.execute(
            f"SELECT {FIRE_FIELDS} FROM {FIRES} WHERE org_id = ? AND trigger_id = ?"
            " ORDER BY fired_at DESC LIMIT ?",
            [org_id, trigger_id, min(limit, 10_000)],
        ).fetchall()

    out = []
    for r in await layer.db.run(q):
        row = dict(zip(names, r, strict=True))
        row["id"], row["trigger_id"] = str(row["id"]), str(row["trigger_id"])
        row["details"] = parsed_json(row["details"])
        out.append(row)
    return out
