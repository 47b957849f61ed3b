"""The one rule for a name or id an agent function takes (session, entity, relation,
artifact, ledger agent and session ids): a non-empty string of bounded length."""

from __future__ import annotations

from typing import Any

from proxy.core.errors import AgentError

MAX_NAME = 256


def name(what: str, value: Any, limit: int = MAX_NAME) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AgentError.invalid(f"{what} must be a non-empty string")
    if len(value) > limit:
        raise AgentError.invalid(f"{what} is {len(value)} characters; the limit is {limit}")
    return value
