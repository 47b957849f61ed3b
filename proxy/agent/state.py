"""Placeholder: being built (see issue 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.layer import AgentLayer


class State:
    def __init__(self, layer: AgentLayer) -> None:
        self.layer = layer

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Create this service's tables (idempotent)."""

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass
