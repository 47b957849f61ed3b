"""The branch agent functions: create, query, merge, discard, list, expire.

Each one is a thin call into the `Branches` service (`layer.branches`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.agent.branches.merge import STRATEGIES
from proxy.agent.branches.service import STATUSES
from proxy.agent.branches.store import COLUMNS
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

# A name picks its one active branch (or its only one); see proxy.agent.branches.args.resolve.
_BRANCH = "The branch's id or its name"


@agent_function(
    "branch_create",
    params=[
        Param("name", "VARCHAR", "", "Branch name"),
        Param("description", "VARCHAR", "", "What it is for"),
        Param("ttl_seconds", "BIGINT", 3600, "Expire after this many seconds", minimum=1),
        Param("tables", "JSON", None, "Tables of main to copy now", json_shape="array"),
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
    mcp=McpTool(
        ("name", "description", "ttl_seconds"),
        "Create an isolated copy-on-write branch of the data (views over main until written).",
    ),
)
async def branch_create(
    layer: AgentContext, who: Identity, name: str, description: str, ttl_seconds: int, tables: Any
) -> list[dict[str, Any]]:
    """Create a branch: a schema of views over main's tables, copied on first write."""
    return [await layer.branches.create(who, name, description, ttl_seconds, tables)]


@agent_function(
    "branch_query",
    params=[
        Param("branch_id", "VARCHAR", description=_BRANCH),
        Param(
            "sql",
            "VARCHAR",
            description="SQL to run (Postgres, DuckDB or Snowflake dialect)",
            nonempty=True,
        ),
    ],
    columns=[("row", "JSON")],
    scope="branch:query",
    writes=True,
    mcp=McpTool(("branch_id", "sql"), "Run SQL inside a branch."),
)
async def branch_query(
    layer: AgentContext, who: Identity, branch_id: str, sql: str
) -> list[dict[str, Any]]:
    """Run SQL inside a branch; one JSON object per result row of the last statement."""
    return await layer.branches.query(who, branch_id, sql)


@agent_function(
    "branch_merge",
    params=[
        Param("branch_id", "VARCHAR", description=_BRANCH),
        Param("strategy", "VARCHAR", "branch_wins", "branch_wins or main_wins", enum=STRATEGIES),
    ],
    columns=[
        ("branch_id", "VARCHAR"),
        ("status", "VARCHAR"),
        ("strategy", "VARCHAR"),
        ("merged_at", "TIMESTAMPTZ"),
        ("tables", "JSON"),
    ],
    scope="branch:merge",
    writes=True,
    mcp=McpTool(("branch_id", "strategy"), "Merge a branch's changes into main."),
)
async def branch_merge(
    layer: AgentContext, who: Identity, branch_id: str, strategy: str
) -> list[dict[str, Any]]:
    """Merge a branch into main (branch_wins or main_wins) and drop it."""
    return [await layer.branches.merge(who, branch_id, strategy)]


@agent_function(
    "branch_discard",
    params=[Param("branch_id", "VARCHAR", description=_BRANCH)],
    columns=[("branch_id", "VARCHAR"), ("status", "VARCHAR"), ("discarded_at", "TIMESTAMPTZ")],
    scope="branch:discard",
    writes=True,
    mcp=McpTool(("branch_id",), "Drop a branch and its data."),
)
async def branch_discard(
    layer: AgentContext, who: Identity, branch_id: str
) -> list[dict[str, Any]]:
    """Drop a branch and everything written in it."""
    return [await layer.branches.discard(who, branch_id)]


@agent_function(
    "branch_list",
    params=[Param("status", "VARCHAR", "", "Filter by status: " + ", ".join(STATUSES))],
    columns=COLUMNS,
    scope="branch:read",
    mcp=McpTool(("status",), "List branches."),
)
async def branch_list(layer: AgentContext, who: Identity, status: str) -> list[dict[str, Any]]:
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
async def expire_branches(layer: AgentContext, who: Identity) -> list[dict[str, Any]]:
    """Expire the caller's branches past their expires_at now (a background task does it too)."""
    return await layer.branches.expire(who)
