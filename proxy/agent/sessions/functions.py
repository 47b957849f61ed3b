"""The session functions (SQL table functions, MCP tools, REST), one declaration each."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proxy.agent.sessions import search, upkeep, window
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

READ = "memory:read"
WRITE = "memory:write"

_SESSION = (
    ("session_id", "VARCHAR"),
    ("app_name", "VARCHAR"),
    ("user_id", "VARCHAR"),
    ("state", "JSON"),
    ("event_count", "BIGINT"),
    ("created_at", "TIMESTAMPTZ"),
    ("updated_at", "TIMESTAMPTZ"),
)
_EVENT = (
    ("session_id", "VARCHAR"),
    ("seq", "BIGINT"),
    ("event_id", "VARCHAR"),
    ("invocation_id", "VARCHAR"),
    ("author", "VARCHAR"),
    ("branch", "VARCHAR"),
    ("message", "JSON"),
    ("actions", "JSON"),
    ("metadata", "JSON"),
    ("timestamp", "TIMESTAMPTZ"),
)
_SID = Param("session_id", "VARCHAR", description="The session's id")
# What append_event and append_events return for each event appended.
_APPENDED = [
    ("session_id", "VARCHAR"),
    ("seq", "BIGINT"),
    ("event_id", "VARCHAR"),
    ("timestamp", "TIMESTAMPTZ"),
]


@agent_function(
    "create_session",
    params=[
        Param("app_name", "VARCHAR", description="The application the session belongs to"),
        Param("user_id", "VARCHAR", description="The user the session is with"),
        Param("session_id", "VARCHAR", None, "Its id (a new UUID when not given)"),
        Param(
            "state",
            "JSON",
            None,
            "Initial state; app:/user: keys go to their scope",
            json_shape="object",
        ),
    ],
    columns=_SESSION,
    scope=WRITE,
    writes=True,
    mcp=McpTool(("app_name", "user_id", "session_id", "state")),
)
async def create_session(
    layer: AgentContext,
    who: Identity,
    *,
    app_name: str,
    user_id: str,
    session_id: Any,
    state: Any,
) -> list[dict[str, Any]]:
    """Start a conversation session of an app with a user."""
    return [await layer.sessions.create(who, app_name, user_id, session_id, state)]


@agent_function(
    "get_session",
    params=[_SID],
    columns=_SESSION,
    scope=READ,
    mcp=McpTool(("session_id",)),
)
async def get_session(layer: AgentContext, who: Identity, *, session_id: str) -> list[dict]:
    """A session with the state it sees (its keys, its user's and app's, live temp: keys)."""
    return [await layer.sessions.get(who, session_id)]


@agent_function(
    "list_sessions",
    params=[
        Param("app_name", "VARCHAR", None, "Only this app's sessions"),
        Param("user_id", "VARCHAR", None, "Only this user's sessions"),
        Param("page_size", "BIGINT", 50, "Most sessions per page", minimum=1, maximum=1000),
        Param("after", "VARCHAR", None, "The last session_id of the previous page"),
    ],
    columns=[c for c in _SESSION if c[0] not in ("state", "event_count")],
    scope=READ,
    mcp=McpTool(("app_name", "user_id", "page_size", "after")),
)
async def list_sessions(
    layer: AgentContext,
    who: Identity,
    *,
    app_name: Any,
    user_id: Any,
    page_size: int,
    after: Any,
) -> list[dict[str, Any]]:
    """The caller's sessions by id, a page at a time (pass the last id as `after`)."""
    return await layer.sessions.list(who, app_name, user_id, page_size, after)


@agent_function(
    "delete_session",
    params=[_SID],
    columns=[("session_id", "VARCHAR"), ("deleted", "BOOLEAN"), ("events_deleted", "BIGINT")],
    scope=WRITE,
    writes=True,
    mcp=McpTool(("session_id",)),
)
async def delete_session(layer: AgentContext, who: Identity, *, session_id: str) -> list[dict]:
    """Delete a session with its events and temp: state."""
    return [await layer.sessions.delete(who, session_id)]


@agent_function(
    "append_event",
    params=[
        _SID,
        Param("author", "VARCHAR", description="Who spoke: user, or the agent's name"),
        Param("message", "JSON", None, 'The message, e.g. {"role": "user", "parts": [...]}'),
        Param(
            "actions",
            "JSON",
            None,
            "Actions: tool_calls, state_delta (applied with it)",
            json_shape="object",
        ),
        Param("invocation_id", "VARCHAR", None, "The invocation (turn) it belongs to"),
        Param("branch", "VARCHAR", None, "The agent hierarchy path"),
        Param("metadata", "JSON", None, "Anything else", json_shape="object"),
        Param("event_id", "VARCHAR", None, "Its id (a new UUID when not given)"),
    ],
    columns=_APPENDED,
    scope=WRITE,
    writes=True,
    mcp=McpTool(("session_id", "author", "message", "actions", "invocation_id", "metadata")),
    fast=lambda layer, who, *, session_id, **event: layer.sessions.append_fast(
        who, session_id, event
    ),
)
async def append_event(
    layer: AgentContext, who: Identity, *, session_id: str, **event: Any
) -> list[dict[str, Any]]:
    """Append an event to a session (in order); its actions.state_delta updates the state."""
    return [await layer.sessions.append(who, session_id, event)]


MAX_EVENTS = 10_000  # events one append_events call takes


@agent_function(
    "append_events",
    params=[
        _SID,
        Param(
            "events",
            "JSON",
            description="The events in order: objects with author, message, actions, ...",
            json_shape="array",
        ),
    ],
    columns=_APPENDED,
    scope=WRITE,
    writes=True,
    mcp=McpTool(("session_id", "events")),
)
async def append_events(
    layer: AgentContext, who: Identity, *, session_id: str, events: Any
) -> list[dict[str, Any]]:
    """Append many events in one transaction, as append_event does each: all or none."""
    if isinstance(events, str):
        try:
            events = json.loads(events)
        except json.JSONDecodeError:
            raise AgentError.invalid("events must be a JSON array") from None
    if not isinstance(events, list):
        raise AgentError.invalid("events must be an array of event objects")
    if len(events) > MAX_EVENTS:
        raise AgentError.invalid(
            f"{len(events)} events in one call; append_events takes at most {MAX_EVENTS}",
            hint="split them into several calls",
        )
    return await layer.sessions.append_many(who, session_id, events)


@agent_function(
    "session_events",
    params=[
        _SID,
        Param("last_n", "BIGINT", None, "Only the last N events", minimum=0),
        Param("after", "TIMESTAMPTZ", None, "Only events after this time"),
    ],
    columns=_EVENT,
    scope=READ,
    mcp=McpTool(("session_id", "last_n", "after")),
)
async def session_events(
    layer: AgentContext, who: Identity, *, session_id: str, last_n: Any, after: Any
) -> list[dict[str, Any]]:
    """A session's events in order: all, the last N, or those after a time."""
    return await layer.sessions.events(who, session_id, last_n, after)


@agent_function(
    "set_session_state",
    params=[
        _SID,
        Param("key", "VARCHAR", description="The key; app:, user:, temp: prefixes pick the scope"),
        Param("value", "JSON", description="The value (JSON null deletes the key)"),
        Param("invocation_id", "VARCHAR", None, "The invocation a temp: key belongs to"),
    ],
    columns=[("key", "VARCHAR"), ("value", "JSON"), ("scope", "VARCHAR")],
    scope=WRITE,
    writes=True,
)
async def set_session_state(
    layer: AgentContext,
    who: Identity,
    *,
    session_id: str,
    key: str,
    value: Any,
    invocation_id: Any,
) -> list[dict[str, Any]]:
    """Set one state key of a session in the scope its prefix names."""
    return [await layer.sessions.set_state(who, session_id, key, value, invocation_id)]


@agent_function(
    "end_invocation",
    params=[_SID, Param("invocation_id", "VARCHAR", description="The invocation that ended")],
    columns=[
        ("session_id", "VARCHAR"),
        ("invocation_id", "VARCHAR"),
        ("temp_keys_cleared", "BIGINT"),
    ],
    scope=WRITE,
    writes=True,
)
async def end_invocation(
    layer: AgentContext, who: Identity, *, session_id: str, invocation_id: str
) -> list[dict[str, Any]]:
    """End an invocation: its temp: state keys are cleared."""
    return [await layer.sessions.end_invocation(who, session_id, invocation_id)]


@agent_function(
    "working_memory",
    params=[
        _SID,
        Param(
            "strategy",
            "VARCHAR",
            "buffer_window",
            "all, buffer_window, token_window or summary_buffer",
            enum=window.STRATEGIES,
        ),
        Param(
            "max_messages",
            "BIGINT",
            20,
            "buffer_window, summary_buffer: how many recent events",
            minimum=0,
        ),
        Param("max_tokens", "BIGINT", 4000, "token_window: the token budget", minimum=0),
    ],
    columns=[*_EVENT, ("tokens", "BIGINT")],
    scope=READ,
    mcp=McpTool(("session_id", "strategy", "max_messages", "max_tokens")),
)
async def working_memory(
    layer: AgentContext,
    who: Identity,
    *,
    session_id: str,
    strategy: str,
    max_messages: int,
    max_tokens: int,
) -> list[dict[str, Any]]:
    """The events to hand an LLM for the next turn, by strategy; token_window counts tokens
    with the embedding model's tokenizer (words when no model is loaded)."""
    if strategy not in window.STRATEGIES:
        raise AgentError.invalid(f"strategy must be one of {', '.join(window.STRATEGIES)}")
    for what, n in (("max_messages", max_messages), ("max_tokens", max_tokens)):
        if not isinstance(n, int) or n < 0:
            raise AgentError.invalid(f"{what} must be a non-negative integer")
    events = await layer.sessions.events(who, session_id, None, None)
    picked = window.select(events, strategy, max_messages, max_tokens, _counter(layer))
    return [{"tokens": None, **e} for e in picked]


def _counter(layer: AgentContext) -> Callable[[str], int]:
    provider = getattr(layer.semantic.embedder, "provider", None)
    tokenizer = getattr(provider, "tokenizer", None)
    if tokenizer is None:
        return lambda text: len(text.split())
    count = _COUNTERS.get(id(provider))
    if count is None:  # the model's tokenizer without its truncation: count whole texts
        from tokenizers import Tokenizer

        tok = Tokenizer.from_str(tokenizer.to_str())
        tok.no_truncation()
        tok.no_padding()
        count = _COUNTERS[id(provider)] = lambda text: len(tok.encode(text).ids)
    return count


_COUNTERS: dict[int, Callable[[str], int]] = {}  # one per loaded model


@agent_function(
    "search_sessions",
    params=[
        Param(
            "query", "VARCHAR", description="What to look for in past conversations", nonempty=True
        ),
        Param("app_name", "VARCHAR", None, "Only this app's sessions"),
        Param("user_id", "VARCHAR", None, "Only this user's sessions"),
        Param("top_k", "BIGINT", 10, "How many events", minimum=1, maximum=search.MAX_TOP_K),
        Param("mode", "VARCHAR", "hybrid", "hybrid, vector or keyword", enum=search.MODES),
    ],
    columns=[
        ("session_id", "VARCHAR"),
        ("seq", "BIGINT"),
        ("event_id", "VARCHAR"),
        ("author", "VARCHAR"),
        ("timestamp", "TIMESTAMPTZ"),
        ("text", "VARCHAR"),
        ("score", "DOUBLE"),
        ("semantic", "DOUBLE"),
        ("keyword", "DOUBLE"),
    ],
    scope=READ,
    mcp=McpTool(("query", "app_name", "user_id", "top_k", "mode")),
)
async def search_sessions(
    layer: AgentContext,
    who: Identity,
    *,
    query: str,
    app_name: Any,
    user_id: Any,
    top_k: int,
    mode: str,
) -> list[dict[str, Any]]:
    """Search the events of past sessions: vector and keyword candidates fused by
    interleaved rank (score), with each side's own score."""
    return await layer.sessions.index.search(who, query, app_name, user_id, top_k, mode)


@agent_function(
    "rebuild_session_index",
    params=[
        Param("app_name", "VARCHAR", None, "Only this app's sessions"),
        Param("user_id", "VARCHAR", None, "Only this user's sessions"),
    ],
    columns=[("events_indexed", "BIGINT"), ("events_embedded", "BIGINT")],
    scope=WRITE,
    writes=True,
)
async def rebuild_session_index(
    layer: AgentContext, who: Identity, *, app_name: Any, user_id: Any
) -> list[dict[str, Any]]:
    """Derive the search index again from the sessions (after corruption or a model
    change); searches give the same results as before."""
    return [await layer.sessions.index.rebuild(who, app_name, user_id)]


@agent_function(
    "compact_session",
    params=[
        _SID,
        Param("threshold", "BIGINT", 50, "Compact only from this many events", minimum=1),
        Param("keep_recent", "BIGINT", 10, "Recent events kept verbatim", minimum=0),
    ],
    columns=[
        ("session_id", "VARCHAR"),
        ("compacted", "BOOLEAN"),
        ("summarized", "BIGINT"),
        ("kept", "BIGINT"),
        ("memory_id", "VARCHAR"),
        ("method", "VARCHAR"),
    ],
    scope=WRITE,
    writes=True,
    mcp=McpTool(("session_id", "threshold", "keep_recent")),
)
async def compact_session(
    layer: AgentContext, who: Identity, *, session_id: str, threshold: int, keep_recent: int
) -> list[dict[str, Any]]:
    """Summarise a long session's older events into a memory (importance 0.9) and one
    system event; the recent events stay verbatim. `method` says what summarised."""
    return [await upkeep.compact(layer, who, session_id, threshold, keep_recent)]


@agent_function(
    "repair_session",
    params=[_SID],
    columns=[
        ("session_id", "VARCHAR"),
        ("repaired", "BOOLEAN"),
        ("fixes", "BIGINT"),
        ("stats", "JSON"),
    ],
    scope=WRITE,
    writes=True,
)
async def repair_session(layer: AgentContext, who: Identity, *, session_id: str) -> list[dict]:
    """Check and repair a session in seven phases (empty ids, duplicates, same-role
    merges, orphans, ordering, oversized, write-back); running it again changes nothing."""
    return [await upkeep.repair(layer, who, session_id)]
