"""The trigger agent functions that manage triggers: register, update, re-embed, list, delete.

Testing a text and listing fires are in `proxy.agent.triggers.observe`, the inbox in
`proxy.agent.triggers.inbox`.

Rows come from `proxy.agent.triggers.store`, argument checks from `proxy.agent.triggers.args`;
every function is scoped to the caller's own triggers (not found otherwise), and names a
trigger by its id or by its name (unique per agent; `store.resolve`).
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.triggers.args import (
    ACTIONS,
    DEFAULT_ACTION,
    DEFAULT_COOLDOWN_SECS,
    DEFAULT_LIFECYCLE_COOLDOWN_SECS,
    EVENT_SOURCES,
    LIFECYCLE,
    LIFECYCLE_EVENTS,
    MAX_CONCEPT_CHARS,
    MAX_NAME_CHARS,
    SCOPES,
    actions_arg,
    check_actions,
    config_arg,
    cooldown_arg,
    event_type_arg,
    lifecycle_threshold_arg,
    scope_arg,
    source_arg,
    text_arg,
    threshold_arg,
    with_default_webhook,
)
from proxy.agent.triggers.service import Triggers
from proxy.agent.triggers.store import (
    TRIGGERS,
    name_taken,
    own,
    parsed_json,
    resolve,
    select_triggers,
    trigger_row,
    utc_now,
)
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function
from proxy.db.agent_lake_views import target

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext


TRIGGER_COLUMNS = (
    ("trigger_id", "UUID"),
    ("id", "UUID"),
    ("org_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("name", "VARCHAR"),
    ("concept", "VARCHAR"),
    ("threshold", "DOUBLE"),
    ("actions", "JSON"),
    ("action_type", "VARCHAR"),
    ("action_config", "JSON"),
    ("cooldown_secs", "BIGINT"),
    ("enabled", "BOOLEAN"),
    ("status", "VARCHAR"),
    ("scope", "VARCHAR"),
    ("fire_count", "BIGINT"),
    ("last_fired_at", "TIMESTAMPTZ"),
    ("created_at", "TIMESTAMPTZ"),
    ("updated_at", "TIMESTAMPTZ"),
    ("embedding_model", "VARCHAR"),
    ("embedding_dimensions", "BIGINT"),
    ("event_source", "VARCHAR"),
    ("event_type", "VARCHAR"),
)

_ACTION_TYPE = "What a match does: " + ", ".join(ACTIONS) + " (several: comma-separated)"
_ACTION_CONFIG = "Action settings (e.g. webhook url)"
TRIGGER_ARG = "The trigger's id or its name"
_SCOPE = "agent: the owner's writes; org: the whole organisation's (needs trigger:org)"


@agent_function(
    "register_trigger",
    params=[
        Param("name", "VARCHAR", description="Trigger name"),
        Param("concept", "VARCHAR", None, "The concept to watch for (semantic triggers)"),
        Param(
            "threshold",
            "DOUBLE",
            None,
            "Cosine similarity needed to fire (default: the model's, 0.39 for all-MiniLM-L6-v2); "
            "a lifecycle event's count, bytes or seconds",
        ),
        Param("action_type", "VARCHAR", None, _ACTION_TYPE),
        Param("action_config", "JSON", None, _ACTION_CONFIG, json_shape="object"),
        Param("actions", "JSON", None, "Actions as a JSON array of names", json_shape="array"),
        Param(
            "cooldown_secs",
            "BIGINT",
            None,
            "Seconds before it fires again (300 semantic, 0 lifecycle)",
            minimum=0,
        ),
        Param("enabled", "BOOLEAN", True, "Whether it fires"),
        Param("scope", "VARCHAR", "agent", _SCOPE, enum=SCOPES),
        Param("event_source", "VARCHAR", "semantic", "What it watches", enum=EVENT_SOURCES),
        Param(
            "event_type",
            "VARCHAR",
            None,
            "The branch lifecycle event (event_source branch_lifecycle)",
            enum=LIFECYCLE_EVENTS,
        ),
    ],
    columns=TRIGGER_COLUMNS,
    scope="trigger:write",
    writes=True,
    # The public tool registers semantic triggers only: a concept, a similarity, one action.
    mcp=McpTool(
        (
            "name",
            Param("concept", "VARCHAR", description="The concept to watch for", nonempty=True),
            Param(
                "threshold",
                "DOUBLE",
                None,
                "Cosine similarity needed to fire (default: the model's, 0.39 for "
                "all-MiniLM-L6-v2)",
                minimum=0,
                maximum=1,
            ),
            Param("action_type", "VARCHAR", DEFAULT_ACTION, "What a match does", enum=ACTIONS),
            "action_config",
        ),
        "Watch for content that matches a concept; actions: " + ", ".join(ACTIONS) + ".",
    ),
)
async def register_trigger(
    layer: AgentContext,
    who: Identity,
    *,
    name: Any,
    concept: Any,
    threshold: Any,
    action_type: Any,
    action_config: Any,
    actions: Any,
    cooldown_secs: Any,
    enabled: Any,
    scope: Any,
    event_source: Any,
    event_type: Any,
) -> list[dict[str, Any]]:
    """Register a trigger: a semantic concept (embedded once, now) or a branch lifecycle event."""
    name = text_arg("name", name, MAX_NAME_CHARS)
    source = source_arg(event_source)
    event: str | None = None
    if source == LIFECYCLE:  # no concept to embed: the event type is what it watches
        event = event_type_arg(event_type, concept)
        concept, threshold = event, lifecycle_threshold_arg(event, threshold)
        default_cooldown = DEFAULT_LIFECYCLE_COOLDOWN_SECS
    else:
        if event_type is not None:
            raise AgentError.invalid("event_type is for event_source 'branch_lifecycle' only")
        concept = text_arg("concept", concept, MAX_CONCEPT_CHARS)
        # no threshold: the model's default (registry.py; its scores spread per model)
        default = layer.semantic.trigger_threshold
        threshold = threshold_arg(default if threshold is None else threshold)
        default_cooldown = DEFAULT_COOLDOWN_SECS
    action_list = actions_arg(actions, action_type) or [DEFAULT_ACTION]
    config = with_default_webhook(action_list, config_arg(action_config) or {}, layer.config)
    check_actions(action_list, config, layer.config)
    cooldown = cooldown_arg(default_cooldown if cooldown_secs is None else cooldown_secs)
    scope = scope_arg(scope, who)
    if enabled is not None and not isinstance(enabled, bool):
        raise AgentError.invalid("enabled must be true or false")
    triggers: Triggers = layer.triggers
    vector = None if event is not None else await triggers.embed_concept(concept)
    model = None if vector is None else layer.semantic.model_name
    tid, now = str(uuid.uuid4()), utc_now()

    def insert(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
        if name_taken(cur, who, name, None):
            raise AgentError.conflict(f"you already have a trigger named {name!r}")
        cur.execute(
            f"INSERT INTO {target(TRIGGERS)} (id, org_id, agent_id, name, concept, concept_embedding, "
            "embedding_model, embedding_dimensions, threshold, actions, action_config, "
            "cooldown_secs, enabled, scope, event_source, event_type, fire_count, last_fired_at, "
            "created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?)",
            [tid, who.org_id, who.agent_id, name, concept, vector, model,
             None if vector is None else len(vector), threshold, json.dumps(action_list),
             json.dumps(config), cooldown, enabled is not False, scope, source, event, now, now],
        )  # fmt: skip
        return select_triggers(cur, who, "id = ?", [tid])

    rows = await layer.db.transaction(insert)
    triggers._invalidate(who.org_id)
    return [trigger_row(r) for r in rows]


@agent_function(
    "update_trigger",
    params=[
        Param("trigger_id", "VARCHAR", description=TRIGGER_ARG),
        Param("name", "VARCHAR", None, "New name"),
        Param("concept", "VARCHAR", None, "New concept (embedded again)"),
        Param("threshold", "DOUBLE", None, "New threshold"),
        Param("actions", "JSON", None, "New actions, a JSON array of names", json_shape="array"),
        Param("action_type", "VARCHAR", None, _ACTION_TYPE),
        Param("action_config", "JSON", None, _ACTION_CONFIG, json_shape="object"),
        Param("cooldown_secs", "BIGINT", None, "New cooldown in seconds", minimum=0),
        Param("enabled", "BOOLEAN", None, "Turn it on or off"),
        Param("scope", "VARCHAR", None, _SCOPE, enum=SCOPES),
        Param("reembed", "BOOLEAN", False, "Embed the concept again with the current model"),
    ],
    columns=TRIGGER_COLUMNS,
    scope="trigger:write",
    writes=True,
)
async def update_trigger(
    layer: AgentContext,
    who: Identity,
    *,
    trigger_id: Any,
    name: Any,
    concept: Any,
    threshold: Any,
    actions: Any,
    action_type: Any,
    action_config: Any,
    cooldown_secs: Any,
    enabled: Any,
    scope: Any,
    reembed: Any,
) -> list[dict[str, Any]]:
    """Change any of a trigger's settings; a new concept (or reembed) is embedded again."""
    triggers: Triggers = layer.triggers
    current = await triggers.owned(who, trigger_id)
    lifecycle = current["event_source"] == LIFECYCLE
    if lifecycle and (concept is not None or reembed):
        raise AgentError.invalid(
            "a branch lifecycle trigger has no concept to change or embed",
            hint="its event type is fixed: register another trigger for another event",
        )
    changes: dict[str, Any] = {}
    if name is not None:
        changes["name"] = text_arg("name", name, MAX_NAME_CHARS)
    if concept is not None:
        changes["concept"] = text_arg("concept", concept, MAX_CONCEPT_CHARS)
    if threshold is not None:
        changes["threshold"] = (
            lifecycle_threshold_arg(current["event_type"], threshold)
            if lifecycle
            else threshold_arg(threshold)
        )
    new_actions = actions_arg(actions, action_type)
    new_config = config_arg(action_config)
    final_actions = new_actions or parsed_json(current["actions"])
    final_config = new_config if new_config is not None else (parsed_json(current["action_config"]))
    filled = with_default_webhook(final_actions, final_config or {}, layer.config)
    check_actions(final_actions, filled, layer.config)
    if new_actions is not None:
        changes["actions"] = json.dumps(new_actions)
    if new_config is not None or filled != (final_config or {}):
        changes["action_config"] = json.dumps(filled)
    if cooldown_secs is not None:
        changes["cooldown_secs"] = cooldown_arg(cooldown_secs)
    if enabled is not None:
        if not isinstance(enabled, bool):
            raise AgentError.invalid("enabled must be true or false")
        changes["enabled"] = enabled
    if scope is not None:
        changes["scope"] = scope_arg(scope, who)
    if "concept" in changes or reembed:
        changes["concept_embedding"] = await triggers.embed_concept(
            changes.get("concept", current["concept"])
        )
        changes["embedding_model"] = layer.semantic.model_name
        changes["embedding_dimensions"] = layer.dims
    tid = str(current["id"])
    changes["updated_at"] = utc_now()

    def save(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
        if "name" in changes and name_taken(cur, who, changes["name"], tid):
            raise AgentError.conflict(f"you already have a trigger named {changes['name']!r}")
        sets = ", ".join(f"{k} = ?" for k in changes)
        cur.execute(
            f"UPDATE {target(TRIGGERS)} SET {sets} WHERE id = ? AND org_id = ? AND agent_id = ?",
            [*changes.values(), tid, who.org_id, who.agent_id],
        )
        return select_triggers(cur, who, "id = ?", [tid])

    rows = await layer.db.transaction(save)
    triggers._invalidate(who.org_id)
    if not rows:
        raise AgentError.not_found(f"trigger {tid} not found")
    return [trigger_row(r) for r in rows]


@agent_function(
    "reembed_trigger",
    params=[Param("trigger_id", "VARCHAR", description=TRIGGER_ARG)],
    columns=[
        ("trigger_id", "UUID"),
        ("status", "VARCHAR"),
        ("embedding_model", "VARCHAR"),
        ("embedding_dimensions", "BIGINT"),
    ],
    scope="trigger:write",
    writes=True,
)
async def reembed_trigger(layer: AgentContext, who: Identity, *, trigger_id: Any):
    """Embed a trigger's concept again with the current model (REST re-embed-concept)."""
    rows = await update_trigger(
        layer, who, trigger_id=trigger_id, name=None, concept=None, threshold=None, actions=None,
        action_type=None, action_config=None, cooldown_secs=None, enabled=None, scope=None,
        reembed=True,
    )  # fmt: skip
    r = rows[0]
    return [
        {
            "trigger_id": r["trigger_id"],
            "status": "reembedded",
            "embedding_model": r["embedding_model"],
            "embedding_dimensions": r["embedding_dimensions"],
        }
    ]


@agent_function(
    "list_triggers",
    params=[Param("status", "VARCHAR", None, "active, inactive or all (default all)")],
    columns=TRIGGER_COLUMNS,
    scope="trigger:read",
    mcp=McpTool(("status",), "List semantic triggers."),
)
async def list_triggers(layer: AgentContext, who: Identity, *, status: Any) -> list[dict[str, Any]]:
    """The caller's triggers: status 'active', 'inactive' or 'all' (default)."""
    wanted = (status or "all").strip().lower() if isinstance(status, str | None) else status
    where = {
        "all": "TRUE",
        "active": "enabled",
        "enabled": "enabled",
        "inactive": "NOT enabled",
        "disabled": "NOT enabled",
    }.get(wanted)
    if where is None:
        raise AgentError.invalid(f"status must be 'active', 'inactive' or 'all', got {status!r}")
    rows = await layer.db.run(lambda cur: select_triggers(cur, who, where))
    return [trigger_row(r) for r in rows]


@agent_function(
    "delete_trigger",
    params=[Param("trigger_id", "VARCHAR", description=TRIGGER_ARG)],
    columns=[("trigger_id", "UUID"), ("status", "VARCHAR"), ("deleted", "BOOLEAN")],
    scope="trigger:write",
    writes=True,
    mcp=McpTool(("trigger_id",), "Delete a semantic trigger (its fire history stays)."),
)
async def delete_trigger(layer: AgentContext, who: Identity, *, trigger_id: Any):
    """Delete a trigger (its fire history stays)."""

    def delete(cur: duckdb.DuckDBPyConnection) -> str | None:
        tid = resolve(cur, trigger_id, *own(who))
        # no RETURNING: a DuckLake refuses it (the triggers may live in the agent lake)
        where = "WHERE id = ? AND org_id = ? AND agent_id = ?"
        ids = [tid, who.org_id, who.agent_id]
        if cur.execute(f"SELECT 1 FROM {TRIGGERS} {where}", ids).fetchone() is None:
            return None
        cur.execute(f"DELETE FROM {target(TRIGGERS)} {where}", ids)
        return tid

    tid = await layer.db.transaction(delete)
    if tid is None:
        raise AgentError.not_found(f"trigger {trigger_id!r} not found")
    layer.triggers._invalidate(who.org_id)
    layer.triggers._last_fired.pop(str(tid), None)  # cooldowns: only of triggers that exist
    return [{"trigger_id": tid, "status": "deleted", "deleted": True}]
