"""What an agent service gets from the running layer, as a protocol.

The services (memory, state, graph, sessions, ledger, triggers, branches) are built by
`proxy.agent.layer.AgentLayer` and get it back as their context; typing them against this
protocol keeps them from importing the layer that imports them. Sibling services are
typed loosely: a service reaches another only through the context, never by import
(branches -> triggers and memory -> triggers are the only such calls).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from proxy.core.config import Config
    from proxy.core.identity import Identity
    from proxy.core.registry import Registry
    from proxy.db.agent_lake_poll import LakePoller
    from proxy.db.engine import Engine
    from proxy.db.pool import PooledDB
    from proxy.semantic.engine import SemanticEngine


class AgentContext(Protocol):
    config: Config
    engine: Engine
    semantic: SemanticEngine
    db: PooledDB  # the agent database
    users_db: PooledDB  # the users' database (branch schemas)
    registry: Registry
    journal: Any  # proxy/agent/journal.py
    lake: LakePoller | None  # with a DuckLake catalog: the agent lake's poller
    compaction: Any  # proxy/agent/compaction.py
    memory: Any
    state: Any
    graph: Any
    sessions: Any
    maintenance: Any
    ledger: Any
    triggers: Any
    branches: Any

    @property
    def dims(self) -> int: ...

    @property
    def org_id(self) -> str: ...

    def add_service(self, service: Any) -> None: ...

    async def call(
        self, name: str, who: Identity, args: list[Any] | None = None, /, **kwargs: Any
    ) -> list[dict[str, Any]]: ...


class KeyedLocks:
    """One asyncio lock per key (an agent's key, graph or session): writers of one key
    take turns, as DuckDB would abort all but one of concurrent transactions on the same
    rows. A lock lives while someone holds or waits for it."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[Hashable, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    def __call__(self, key: Hashable) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock
