"""The trigger agent functions that look without changing anything: test a text against a
trigger (similarity against its threshold), and list its fires."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from proxy.agent.triggers.api import TRIGGER_ARG
from proxy.agent.triggers.args import LIFECYCLE, text_arg
from proxy.agent.triggers.evaluate import unit_rows
from proxy.agent.triggers.service import Triggers
from proxy.agent.triggers.store import FIRES, TRIGGERS, own, parsed_json, resolve, uuids_as_text
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext


@agent_function(
    "test_trigger",
    params=[
        Param("trigger_id", "VARCHAR", description=TRIGGER_ARG),
        Param("content", "VARCHAR", None, "Content to test", nonempty=True),
        Param("text", "VARCHAR", None, "Another name of content (REST)"),
    ],
    columns=[
        ("trigger_id", "UUID"),
        ("trigger_name", "VARCHAR"),
        ("matched", "BOOLEAN"),
        ("would_fire", "BOOLEAN"),
        ("score", "DOUBLE"),
        ("similarity", "DOUBLE"),
        ("threshold", "DOUBLE"),
        ("model_used", "VARCHAR"),
        ("model_dimensions", "BIGINT"),
    ],
    scope="trigger:read",
    mcp=McpTool(
        (
            "trigger_id",
            Param("content", "VARCHAR", description="Content to test", nonempty=True),
        ),
        "Would this content fire the trigger? No side effects.",
    ),
)
async def test_trigger(
    layer: AgentContext, who: Identity, *, trigger_id: Any, content: Any, text: Any
):
    """Cosine similarity of sample text to the trigger's concept; records nothing."""
    sample = text_arg("content", content if content is not None else text, 10 * 1024 * 1024)
    triggers: Triggers = layer.triggers
    triggers._require_model()

    def load(cur: duckdb.DuckDBPyConnection) -> tuple[str, tuple | None]:
        tid = resolve(cur, trigger_id, *own(who))
        return tid, cur.execute(
            f"SELECT name, threshold, concept_embedding, embedding_model, embedding_dimensions, "
            f"concept, event_source FROM {TRIGGERS} WHERE id = ? AND org_id = ? AND agent_id = ?",
            [tid, who.org_id, who.agent_id],
        ).fetchone()

    tid, row = await layer.db.run(load)
    if row is None:
        raise AgentError.not_found(f"trigger {trigger_id!r} not found")
    if row[6] == LIFECYCLE:
        raise AgentError.invalid("a branch lifecycle trigger fires on branch events, not text")
    name, threshold, concept_vec, model, dims = row[:5]
    if concept_vec is None or model != layer.semantic.model_name or dims != layer.dims:
        # Embedded by another model: compare like with like, without storing anything.
        concept = np.asarray(await triggers.embed_concept(row[5]), dtype=np.float32)
    else:
        concept = unit_rows(np.asarray(concept_vec, dtype=np.float32))
    score = float(concept @ await triggers.embed_text(sample))
    matched = score >= threshold
    return [
        {
            "trigger_id": tid,
            "trigger_name": name,
            "matched": matched,
            "would_fire": matched,
            "score": score,
            "similarity": score,
            "threshold": threshold,
            "model_used": layer.semantic.model_name,
            "model_dimensions": layer.dims,
        }
    ]


FIRE_COLUMNS = (
    ("id", "UUID"),
    ("trigger_id", "UUID"),
    ("trigger_name", "VARCHAR"),
    ("org_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("source", "VARCHAR"),
    ("source_id", "VARCHAR"),
    ("source_agent_id", "VARCHAR"),
    ("similarity", "DOUBLE"),
    ("threshold", "DOUBLE"),
    ("input_text", "VARCHAR"),
    ("action_taken", "VARCHAR"),
    ("status", "VARCHAR"),
    ("details", "JSON"),
    ("fired_at", "TIMESTAMPTZ"),
)


@agent_function(
    "trigger_fires",
    params=[
        Param("trigger_id", "VARCHAR", None, "Only this trigger's fires (its id or name)"),
        Param("limit", "BIGINT", 100, "Most fires to return", minimum=1),
        Param("since", "TIMESTAMPTZ", None, "Only fires at or after this time"),
    ],
    columns=FIRE_COLUMNS,
    scope="trigger:read",
)
async def trigger_fires(
    layer: AgentContext, who: Identity, *, trigger_id: Any, limit: Any, since: Any
):
    """Fire events of one of the caller's triggers (or of all of them), newest first."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise AgentError.invalid(f"limit must be a positive integer, got {limit!r}")
    where, params = "org_id = ? AND agent_id = ?", [who.org_id, who.agent_id]
    if trigger_id is not None:
        tid = str((await layer.triggers.owned(who, trigger_id))["id"])
        where, params = where + " AND trigger_id = ?", [*params, tid]
    if since is not None:
        if isinstance(since, str):
            try:
                since = dt.datetime.fromisoformat(since)
            except ValueError:
                raise AgentError.invalid(
                    f"since must be an ISO 8601 timestamp: {since!r}"
                ) from None
        where, params = where + " AND fired_at >= ?", [*params, since]
    cols = ", ".join(c for c, _ in FIRE_COLUMNS)

    def load(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        return cur.execute(
            f"SELECT {cols} FROM {FIRES} WHERE {where} ORDER BY fired_at DESC LIMIT ?",
            [*params, min(limit, 10_000)],
        ).fetchall()

    rows = await layer.db.run(load)
    out = []
    for r in rows:
        row = dict(zip((c for c, _ in FIRE_COLUMNS), r, strict=True))
        row["details"] = parsed_json(row["details"])
        out.append(uuids_as_text(row))
    return out
