"""The running agent layer: database access, the embedding engine, and the services.

`AgentLayer` is created once per server next to the Engine. Its services (memory,
state, ledger, triggers, branches) each own their tables in `hatidata_internal` and
register their operations in `proxy.core.registry.REGISTRY`. All DuckDB work goes
through `AgentDB.run`, which lends a pooled cursor on the engine's worker threads,
so agent operations never block the event loop and never touch a client session's
cursor (or its transaction): an agent write commits on its own, at once.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.registry import REGISTRY
from proxy.db.commit_clock import CountingCursor

if TYPE_CHECKING:
    from proxy.db.engine import Engine

log = logging.getLogger("hatiproxy.agent")
T = TypeVar("T")


class AgentDB:
    """Pooled DuckDB cursors on the shared database, used on the engine's worker threads."""

    def __init__(self, engine: Engine, size: int = 4) -> None:
        self.engine = engine
        self._pool: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
        self._size = size
        self._closed = False
        for _ in range(size):
            self._pool.put(engine.db.cursor())

    def _borrow(self) -> duckdb.DuckDBPyConnection:
        # Poll rather than block forever: after close() no cursor comes back.
        while not self._closed:
            try:
                return self._pool.get(timeout=0.5)
            except queue.Empty:
                continue
        raise AgentError.unavailable("the server is shutting down")

    def _with_cursor(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        cur = self._borrow()
        # Counts on the commit clock from its first write on: reads never make a wire
        # session's ROLLBACK TO SAVEPOINT refuse its replay (proxy/db/commit_clock.py).
        counting = CountingCursor(cur)
        try:
            return fn(counting)  # type: ignore[arg-type]
        finally:
            counting.settle()
            self._pool.put(cur)

    @staticmethod
    def _in_transaction(fn: Callable[[duckdb.DuckDBPyConnection], T]):
        def run(cur: duckdb.DuckDBPyConnection) -> T:
            cur.begin()
            try:
                out = fn(cur)
            except BaseException:
                cur.rollback()
                raise
            cur.commit()
            return out

        return run

    async def run(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run fn(cursor) on a worker thread, in autocommit mode (each statement commits)."""
        return await self.engine.run_uncounted(self._with_cursor, fn)

    async def transaction(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run fn(cursor) on a worker thread inside one transaction: all of it or nothing."""
        return await self.engine.run_uncounted(self._with_cursor, self._in_transaction(fn))

    def run_sync(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """For start-up and shutdown code that is already off the event loop."""
        return self._with_cursor(fn)

    def close(self, timeout: float = 10.0) -> None:
        """Close every cursor, waiting up to `timeout` for those still lent out."""
        self._closed = True
        for _ in range(self._size):
            try:
                self._pool.get(timeout=timeout).close()
            except queue.Empty:
                break


class AgentLayer:
    def __init__(self, engine: Engine) -> None:
        from proxy.agent import state
        from proxy.agent.branches import service as branches
        from proxy.agent.ledger import service as ledger
        from proxy.agent.memory import service as memory
        from proxy.agent.triggers import service as triggers

        self.engine = engine
        self.config = engine.config
        self.semantic = engine.semantic  # .embedder (None without a model), .worker, .dims
        self.db = AgentDB(engine)
        self.registry = REGISTRY
        self.db.run_sync(lambda cur: cur.execute(f"CREATE SCHEMA IF NOT EXISTS {INTERNAL_SCHEMA}"))
        # Order matters: triggers first, so memory and ledger can notify them.
        self.triggers = triggers.Triggers(self)
        self.memory = memory.Memory(self)
        self.state = state.State(self)
        self.ledger = ledger.Ledger(self)
        self.branches = branches.Branches(self)
        self._services: list[Any] = [
            self.triggers,
            self.memory,
            self.state,
            self.ledger,
            self.branches,
        ]
        for service in self._services:
            self.db.run_sync(service.install)

    @property
    def dims(self) -> int:
        return self.semantic.dims

    @property
    def org_id(self) -> str:
        return self.config.org_id

    def identity(self, agent_id: str, user: str = "", scopes: frozenset[str] | None = None):
        return Identity(self.org_id, agent_id, user, scopes)

    def add_service(self, service: Any) -> None:
        """Install another service and run its start / stop with the layer's (key usage)."""
        self.db.run_sync(service.install)
        self._services.append(service)

    async def start(self) -> None:
        for service in self._services:
            await service.start()

    async def stop(self) -> None:
        for service in reversed(self._services):
            try:
                await service.stop()
            except Exception:  # one failing service must not stop the others flushing
                log.exception("stopping %s failed", type(service).__name__)
        self.db.close()

    async def call(
        self, name: str, who: Identity, args: list[Any] | None = None, /, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """Run a registered agent function by name (MCP and REST come in here)."""
        return await self.registry.get(name).call(self, who, list(args or []), kwargs)
