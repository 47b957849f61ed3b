"""Working memory: which of a session's events to hand an LLM for the next turn.

Pure functions over event dicts (in session order). Strategies (seed 002):
`all`, `buffer_window` (the last `max_messages`), `token_window` (the newest events
whose text fits in `max_tokens`, counted by a tokenizer function), `summary_buffer`
(the latest compaction summary, then the last `max_messages` other events). Choosing
never writes: `compact_session` after a turn is what replaces old events by a summary.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

STRATEGIES = ("all", "buffer_window", "token_window", "summary_buffer")


def event_text(event: dict[str, Any]) -> str:
    """The words of an event: its message's text parts (or text), then its tool calls."""
    message = event.get("message")
    parts: list[str] = []
    if isinstance(message, str):
        parts.append(message)
    elif isinstance(message, dict):
        if isinstance(message.get("text"), str):
            parts.append(message["text"])
        for part in message.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
    calls = (event.get("actions") or {}).get("tool_calls")
    if calls:
        parts.append(json.dumps(calls, ensure_ascii=False, sort_keys=True))
    return "\n".join(parts)


def select(
    events: list[dict[str, Any]],
    strategy: str,
    max_messages: int,
    max_tokens: int,
    count_tokens: Callable[[str], int],
) -> list[dict[str, Any]]:
    if strategy == "all":
        return list(events)
    if strategy == "buffer_window":
        return events[-max_messages:] if max_messages else []
    if strategy == "token_window":
        kept: list[dict[str, Any]] = []
        used = 0
        for event in reversed(events):
            cost = count_tokens(event_text(event))
            if used + cost > max_tokens:
                break  # never a gap: the window is the newest events that fit
            used += cost
            kept.append({**event, "tokens": cost})
        return kept[::-1]
    if strategy == "summary_buffer":
        summaries = [e for e in events if is_summary(e)]
        rest = [e for e in events if not is_summary(e)]
        return summaries[-1:] + (rest[-max_messages:] if max_messages else [])
    raise ValueError(f"unknown strategy {strategy!r}")


def is_summary(event: dict[str, Any]) -> bool:
    """A compaction's summary event (proxy/agent/sessions/upkeep.py)."""
    return event.get("author") == "system" and "compacted_events" in (event.get("metadata") or {})
