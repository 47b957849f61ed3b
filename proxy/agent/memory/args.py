"""Pure helpers that turn memory arguments and settings into checked Python values."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import uuid
from typing import Any

from proxy.core.errors import AgentError

log = logging.getLogger("hatiproxy.agent.memory")


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def parse_uuid(value: Any, name: str = "memory_id") -> str:
    try:
        return str(uuid.UUID(str(value)))
    except (ValueError, TypeError, AttributeError):
        raise AgentError.invalid(f"{name} must be a UUID, got {str(value)[:80]!r}") from None


def text_arg(value: Any, name: str, *, required: bool = False, limit: int | None = None) -> Any:
    """Optional text (blank is None), or an AgentError: not text, required and blank, too long."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise AgentError.invalid(f"{name} is required and must not be empty")
        return None
    if not isinstance(value, str):
        raise AgentError.invalid(f"{name} must be text, got {type(value).__name__}")
    if limit is not None and len(value) > limit:
        raise AgentError.invalid(f"{name} is longer than {limit} characters")
    return value


def parse_metadata(value: Any, name: str = "metadata") -> dict[str, Any] | None:
    """A JSON object (or JSON text of one); None stays None."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise AgentError.invalid(f"{name} must be a JSON object: {e.msg}") from None
    if not isinstance(value, dict):
        raise AgentError.invalid(f"{name} must be a JSON object, got {type(value).__name__}")
    return value


def parse_weights(text: str) -> tuple[float, float, float, float, float]:
    """'0.5,0.25,0.1,0.1,0.05' -> (semantic, keyword, recency, importance, confidence)."""
    default = (0.5, 0.25, 0.1, 0.1, 0.05)
    if not text:
        return default
    try:
        parts = tuple(float(x) for x in str(text).split(","))
    except ValueError:
        parts = ()
    if len(parts) != 5 or any(p < 0 for p in parts) or sum(parts) <= 0:
        log.warning("memory_score_weights %r is not 5 non-negative numbers; using defaults", text)
        return default
    return parts  # type: ignore[return-value]
