"""Every agent function, loaded and in the order the README table and MCP list them."""

from __future__ import annotations

import importlib

from proxy.core.registry import REGISTRY, AgentFunction, Registry

# Importing a service package registers its agent functions. Their groups are listed (in
# the README table and the MCP tool list) in this order.
SERVICES = (
    "proxy.agent.memory",
    "proxy.agent.state",
    "proxy.agent.graph",
    "proxy.agent.sessions",
    "proxy.agent.ledger",
    "proxy.agent.triggers",
    "proxy.agent.branches",
    "proxy.agent.maintenance",
    "proxy.agent.whoami",
)
GROUPS = tuple(name.split(".")[2] for name in SERVICES)  # memory, state, ledger, ...


def load_functions() -> Registry:
    """REGISTRY with every agent function registered (for callers that start no layer)."""
    for name in SERVICES:
        importlib.import_module(name)
    return REGISTRY


def group_of(fn: AgentFunction) -> str:
    """The package that declares fn: proxy.agent.memory.functions -> memory."""
    parts = fn.handler.__module__.split(".")
    return parts[2] if parts[:2] == ["proxy", "agent"] and len(parts) > 2 else parts[-1]


def in_order(registry: Registry) -> list[AgentFunction]:
    """Functions by group (GROUPS, then others), each group in declaration order."""

    def rank(fn: AgentFunction) -> int:
        group = group_of(fn)
        return GROUPS.index(group) if group in GROUPS else len(GROUPS)

    return sorted(registry, key=rank)  # stable: registration order within a group
