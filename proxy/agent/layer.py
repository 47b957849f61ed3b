"""The running agent layer: database access, the embedding engine, and the services.

`AgentLayer` is created once per server next to the Engine. Its services (memory,
state, ledger, triggers, branches) each own their tables in `hatidata_internal` of the
agent database (proxy/db/agent_db.py, never reachable by client SQL) and register their
operations in `proxy.core.registry.REGISTRY`. All DuckDB work goes through
`PooledDB.run` (proxy.db.pool), which lends a pooled cursor on the engine's worker threads,
so agent operations never block the event loop and never touch a client session's
cursor (or its transaction): an agent write commits on its own, at once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

from proxy.agent import graph, maintenance, state, whoami  # noqa: F401 (whoami: its declaration)
from proxy.agent.branches import service as branches
from proxy.agent.compaction import Compaction
from proxy.agent.journal import Journal
from proxy.agent.ledger import service as ledger
from proxy.agent.memory import service as memory
from proxy.agent.sessions import service as sessions
from proxy.agent.triggers import service as triggers
from proxy.core.identity import Identity
from proxy.core.registry import REGISTRY
from proxy.core.relations import RELATIONS
from proxy.db.agent_lake_poll import LakePoller
from proxy.db.pool import PooledDB

if TYPE_CHECKING:
    from proxy.db.engine import Engine
    from proxy.semantic.engine import SemanticEngine

log = logging.getLogger("hatiproxy.agent")
T = TypeVar("T")


def _relation_columns(cur: Any) -> dict[str, list[tuple[str, str]]]:
    out = {}
    for rel in RELATIONS:
        cur.execute(f"SELECT * FROM ({rel.select}) LIMIT 0", {"org_id": "", "agent_id": ""})
        out[rel.name] = [(d[0], str(d[1])) for d in cur.description]
    return out


class AgentLayer:
    def __init__(self, engine: Engine, semantic: SemanticEngine) -> None:
        self.engine = engine
        self.config = engine.config
        self.semantic = semantic  # .embedder (None without a model), .worker, .dims
        # The agent database; writes there never concern a wire session's savepoints.
        self.db = PooledDB(engine, db=engine.agent_db.db, counted=False)
        # The users' database, for what works on users' tables (branch schemas, pg_proc).
        self.users_db = PooledDB(engine)
        self.registry = REGISTRY
        # Fast acknowledgements of store_memory / append_event (journal.py); each service
        # registers its kind.
        self.journal = Journal(_journal_path(engine))
        # With a DuckLake catalog: the one poller the shared services' catch-ups hang off.
        self.lake = LakePoller(self.db) if self.config.lake_catalog else None
        # Tables that accumulate deleted rows, rewritten by the applier (compaction.py);
        # each service registers its own with the lock its writers take.
        self.compaction = Compaction(self.db, self.config)
        self.journal.between_batches.append(self.compaction.between_batches)
        # Order matters: triggers first, so memory and ledger can notify them.
        self.triggers = triggers.Triggers(self)
        self.memory = memory.Memory(self)
        self.state = state.State(self)
        self.graph = graph.Graph(self)
        self.sessions = sessions.Sessions(self)
        self.ledger = ledger.Ledger(self)
        self.branches = branches.Branches(self)
        self.maintenance = maintenance.Maintenance(self)
        self._services: list[Any] = [
            self.triggers,
            self.memory,
            self.state,
            self.graph,
            self.sessions,
            self.ledger,
            self.branches,
            self.maintenance,
        ]
        for service in self._services:
            self.db.run_sync(service.install)
        # The `_hatidata_*` relations' columns, as their SELECTs give them (core/relations.py).
        self.relation_columns: dict[str, list[tuple[str, str]]] = self.db.run_sync(
            _relation_columns
        )

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
        await self.db.run(self.journal.replay)  # before anything reads the tables
        self.journal.start()
        for service in self._services:
            await service.start()
        if self.lake is not None:  # after the services subscribed (and caught up once)
            await self.lake.start()

    async def stop(self) -> None:
        try:
            await self.journal.stop()  # every acknowledged write into its table first
        except Exception:
            log.exception("stopping the agent journal failed")
        if self.lake is not None:
            await self.lake.stop()
        for service in reversed(self._services):
            try:
                await service.stop()
            except Exception:  # one failing service must not stop the others flushing
                log.exception("stopping %s failed", type(service).__name__)
        self.db.close()
        self.users_db.close()

    async def before_call(self, fn: Any, who: Identity) -> None:
        """Memory and session functions see the caller's journaled writes (journal.py);
        the journaled functions themselves keep their order on their own."""
        if fn.scope and fn.scope.startswith("memory:") and fn.fast is None:
            writing = bool(fn.writes)  # a delete must not meet applied entries in the log
            await self.journal.settled(who.org_id, who.agent_id, writing=writing)

    async def before_relations(self, who: Identity, names: Any) -> None:
        """The memory and session relations show the caller's journaled writes too."""
        if any(n.startswith(("_hatidata_agent_memory", "_hatidata_session")) for n in names):
            await self.journal.settled(who.org_id, who.agent_id)

    async def call(
        self, name: str, who: Identity, args: list[Any] | None = None, /, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """Run a registered agent function by name (MCP and REST come in here)."""
        return await self.registry.get(name).call(self, who, list(args or []), kwargs)


def _journal_path(engine: Engine) -> str | None:
    """The journal beside the agent database; None for an in-memory one."""
    agent_db = getattr(engine, "agent_db", None)
    path = getattr(agent_db, "path", None)
    if agent_db is None or not path or getattr(agent_db.file, "in_memory", True):
        return None
    return str(path) + ".journal"
