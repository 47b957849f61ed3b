"""Argument checks shared by the session functions."""

from __future__ import annotations

import json
from typing import Any

from proxy.agent.names import name  # noqa: F401 - the session functions' name check
from proxy.core.errors import AgentError

MAX_JSON_BYTES = 1 << 20


def json_value(what: str, value: Any) -> Any:
    if len(dump(value).encode()) > MAX_JSON_BYTES:
        raise AgentError.invalid(f"{what} is over {MAX_JSON_BYTES} bytes of JSON")
    return value


def json_object(what: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AgentError.invalid(f"{what} must be a JSON object")
    return json_value(what, value)


def dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise AgentError.invalid(f"not JSON: {exc}") from None
