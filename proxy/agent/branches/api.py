"""The branch agent functions: create, query, merge, discard, list, expire.

Each one is a thin call into the `Branches` service (`layer.branches`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.agent.branches.store import COLUMNS
from proxy.core.identity import Identity
from proxy.core.registry import Param, agent_function

if TYPE_CHECKING:
    from proxy.agent.layer import AgentLayer


@agent_function(
    "branch_create",
    params=[
        Param("name", "VARCHAR", ""),
        Param("description", "VARCHAR", ""),
        Param("ttl_seconds", "BIGINT", 3600),
        Param("tables", "JSON", None),  # tables of main to copy now (snapshot at creation)
    ],
    columns=[
        ("branch_id", "VARCHAR"),
        ("schema_name", "VARCHAR"),
        ("name", "VARCHAR"),
        ("status", "VARCHAR"),
        ("table_count", "BIGINT"),
        ("created_at", "TIMESTAMPTZ"),
        ("expires_at", "TIMESTAMPTZ"),
    ],
    scope="branch:create",
    writes=True,
)
async def branch_create(
    layer: AgentLayer, who: Identity, name: str, description: str, ttl_seconds: int, tables: Any
) -> list[dict[str, Any]]:
    """Create a branch: a schema of views over main's tables, copied on first write."""
    return [await layer.branches.create(who, name, description, ttl_seconds, tables)]


@agent_function(
    "branch_query",
    params=[Param("branch_id", "VARCHAR"), Param("sql", "VARCHAR")],
    columns=[("row", "JSON")],
    scope="branch:query",
    writes=True,
)
async def branch_query(
    layer: AgentLayer, who: Identity, branch_id: str, sql: str
) -> list[dict[str, Any]]:
    """Run SQL inside a branch; one JSON object per result row of the last statement."""
    return await layer.branches.query(who, branch_id, sql)


@agent_function(
    "branch_merge",
    params=[Param("branch_id", "VARCHAR"), Param("strategy", "VARCHAR", "branch_wins")],
    columns=[
        ("branch_id", "VARCHAR"),
        ("status", "VARCHAR"),
        ("strategy", "VARCHAR"),
        ("merged_at", "TIMESTAMPTZ"),
        ("tables", "JSON"),
    ],
    scope="branch:merge",
    writes=True,
)
async def branch_merge(
    layer: AgentLayer, who: Identity, branch_id: str, strategy: str
) -> list[dict[str, Any]]:
    """Merge a branch into main (branch_wins or main_wins) and drop it."""
    return [await layer.branches.merge(who, branch_id, strategy)]


@agent_function(
    "branch_discard",
    params=[Param("branch_id", "VARCHAR")],
    columns=[("branch_id", "VARCHAR"), ("status", "VARCHAR"), ("discarded_at", "TIMESTAMPTZ")],
    scope="branch:discard",
    writes=True,
)
async def branch_discard(layer: AgentLayer, who: Identity, branch_id: str) -> list[dict[str, Any]]:
    """Drop a branch and everything written in it."""
    return [await layer.branches.discard(who, branch_id)]


@agent_function(
    "branch_list",
    params=[Param("status", "VARCHAR", "")],
    columns=COLUMNS,
    scope="branch:read",
)
async def branch_list(layer: AgentLayer, who: Identity, status: str) -> list[dict[str, Any]]:
    """The caller's branches, optionally only those with one status."""
    return await layer.branches.list_branches(who, status)


@agent_function(
    "expire_branches",
    params=[],
    columns=[
        ("branch_id", "VARCHAR"),
        ("name", "VARCHAR"),
        ("status", "VARCHAR"),
        ("expires_at", "TIMESTAMPTZ"),
    ],
    scope="branch:discard",
    writes=True,
)
async def expire_branches(layer: AgentLayer, who: Identity) -> list[dict[str, Any]]:
    """Expire the caller's branches past their expires_at now (a background task does it too)."""
    return await layer.branches.expire(who)
