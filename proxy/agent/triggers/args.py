"""Trigger arguments: the checks shared by the trigger agent functions (names, limits, actions)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from proxy.agent.triggers import webhooks
from proxy.agent.triggers.webhook_guard import WebhookRefused, guard_for
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

if TYPE_CHECKING:
    from proxy.core.config import Config

ACTIONS = ("webhook", "agent_notify", "flag_for_review", "write_event")
SCOPES = ("agent", "org")
LIFECYCLE = "branch_lifecycle"
EVENT_SOURCES = ("semantic", LIFECYCLE)
# Branch lifecycle events; the measured ones compare a figure with the trigger's threshold
# (query count, storage bytes, idle seconds). See proxy.agent.branches.events.
LIFECYCLE_EVENTS = (
    "branch_created",
    "query_count_exceeded",
    "storage_exceeded",
    "idle_timeout",
    "merge_requested",
)
MEASURED_EVENTS = {
    "query_count_exceeded": "queries",
    "storage_exceeded": "bytes",
    "idle_timeout": "seconds",
}
MAX_LIFECYCLE_THRESHOLD = 1e15
DEFAULT_ACTION = "flag_for_review"
DEFAULT_COOLDOWN_SECS = 300
# A lifecycle event happens once per branch (or once per idle spell): no cooldown unless asked.
DEFAULT_LIFECYCLE_COOLDOWN_SECS = 0
MAX_NAME_CHARS = 200
MAX_CONCEPT_CHARS = 4000


def text_arg(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AgentError.invalid(f"{name} must be a non-empty string")
    value = value.strip()
    if len(value) > limit:
        raise AgentError.invalid(f"{name} is longer than {limit} characters")
    return value


def threshold_arg(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise AgentError.invalid(f"threshold must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise AgentError.invalid(f"threshold must be between 0 and 1, got {value}")
    return float(value)


def cooldown_arg(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise AgentError.invalid(f"cooldown_secs must be a whole number, got {value!r}")
    if not 0 <= value <= 10**9:
        raise AgentError.invalid(f"cooldown_secs must be >= 0, got {value}")
    return int(value)


def actions_arg(actions: Any, action_type: Any) -> list[str] | None:
    """`actions` (REST: a list) and/or `action_type` (MCP: one name, or comma-separated)."""
    names: list[str] = []
    for given, label in ((actions, "actions"), (action_type, "action_type")):
        if given is None:
            continue
        if isinstance(given, str):
            stripped = given.strip()
            if stripped.startswith("["):
                try:
                    given = json.loads(stripped)
                except json.JSONDecodeError:
                    raise AgentError.invalid(f"{label} is not valid JSON") from None
            else:
                given = [p for p in (s.strip() for s in stripped.split(",")) if p]
        if not isinstance(given, list) or not all(isinstance(a, str) for a in given):
            raise AgentError.invalid(f"{label} must be a list of action names")
        names.extend(a.strip().lower() for a in given)
    if actions is None and action_type is None:
        return None
    unknown = [a for a in names if a not in ACTIONS]
    if unknown:
        raise AgentError.invalid(
            f"unknown action {unknown[0]!r}", hint="actions: " + ", ".join(ACTIONS)
        )
    if not names:
        raise AgentError.invalid("a trigger needs at least one action", hint=", ".join(ACTIONS))
    return list(dict.fromkeys(names))


def config_arg(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise AgentError.invalid("action_config is not valid JSON") from None
    if not isinstance(value, dict):
        raise AgentError.invalid("action_config must be a JSON object")
    return value


WEBHOOK_SETTING = "trigger_webhook_url (HATIDATA_TRIGGER_WEBHOOK_URL)"


def with_default_webhook(
    actions: list[str], config: dict[str, Any], settings: Config | None
) -> dict[str, Any]:
    """A webhook action without a URL gets the server's trigger_webhook_url.

    The URL is stored on the trigger (checked like any other by `check_actions`), so a
    trigger keeps its destination when the setting changes later."""
    if "webhook" not in actions or config.get("url", config.get("webhook_url")):
        return config
    default = settings.trigger_webhook_url.strip() if settings is not None else ""
    if not default:
        raise AgentError.invalid(
            "the webhook action needs action_config.url (an http(s) URL)",
            hint=f"or set the server's default webhook, {WEBHOOK_SETTING}",
        )
    try:
        guard_for(settings).check_url(webhooks.parse_config({"url": default}).url)
    except (webhooks.WebhookConfigError, WebhookRefused) as exc:
        raise AgentError.invalid(f"the default webhook {WEBHOOK_SETTING}: {exc}") from None
    return {**config, "url": default}


def check_actions(
    actions: list[str], config: dict[str, Any], settings: Config | None = None
) -> None:
    """The actions must be performable with this config (webhook URL, notify target).

    `settings` (the server's Config) adds its own ports and webhook_allowed_hosts to the
    webhook destination rules; without it only the link-local / metadata rules apply."""
    if "webhook" in actions:
        try:
            guard_for(settings).check_url(webhooks.parse_config(config).url)
        except (webhooks.WebhookConfigError, WebhookRefused) as exc:
            raise AgentError.invalid(str(exc)) from None
    target = config.get("agent_id")
    if (
        "agent_notify" in actions
        and target is not None
        and (not isinstance(target, str) or not target.strip())
    ):
        raise AgentError.invalid("action_config.agent_id must be a non-empty string")


def scope_arg(value: Any, who: Identity) -> str:
    scope = (value or "agent").strip().lower() if isinstance(value, str | None) else value
    if scope not in SCOPES:
        raise AgentError.invalid(f"scope must be 'agent' or 'org', got {value!r}")
    if scope == "org" and who.scopes is not None and "trigger:org" not in who.scopes:
        raise AgentError.forbidden("an org-wide trigger needs the trigger:org scope")
    return scope


def source_arg(value: Any) -> str:
    source = (value or "semantic").strip().lower() if isinstance(value, str | None) else value
    if source not in EVENT_SOURCES:
        raise AgentError.invalid(
            f"event_source {value!r} is not supported", hint="'semantic' or 'branch_lifecycle'"
        )
    return source


def event_type_arg(event_type: Any, concept: Any) -> str:
    """The lifecycle event: `event_type`, or `concept` naming one (the plain create form)."""
    given = event_type if event_type is not None else concept
    name = given.strip().lower() if isinstance(given, str) else given
    if name not in LIFECYCLE_EVENTS:
        raise AgentError.invalid(
            f"event_source 'branch_lifecycle' needs an event_type, got {given!r:.60}",
            hint="event_type: " + ", ".join(LIFECYCLE_EVENTS),
        )
    return name


def lifecycle_threshold_arg(event: str, value: Any) -> float:
    """count / bytes / seconds for the measured events; ignored (0 if absent) for the others."""
    if value is None:
        if event in MEASURED_EVENTS:
            raise AgentError.invalid(
                f"a {event} trigger needs a threshold ({MEASURED_EVENTS[event]})"
            )
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise AgentError.invalid(f"threshold must be a number, got {value!r:.60}")
    measured = event in MEASURED_EVENTS
    if not (value > 0 if measured else value >= 0) or value > MAX_LIFECYCLE_THRESHOLD:
        low = "> 0" if measured else ">= 0"
        unit = MEASURED_EVENTS.get(event, "ignored for this event")
        raise AgentError.invalid(
            f"threshold for {event} must be {low} and <= {MAX_LIFECYCLE_THRESHOLD:g} ({unit}), "
            f"got {value}"
        )
    return float(value)
