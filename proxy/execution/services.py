"""What every interface (wire, MCP, REST) runs on, built once by `proxy.app`.

The interfaces get this bundle, not each other: the REST and MCP apps never import the
wire server, and the wire server never imports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from proxy.access import ownership
from proxy.access.service import AccessControl
from proxy.agent.all_functions import load_functions
from proxy.agent.layer import AgentLayer
from proxy.core.config import Config
from proxy.db.agent_lake_poll import LakePoller
from proxy.db.catalog import functions as catalog_functions
from proxy.db.engine import Engine
from proxy.db.pool import PooledDB
from proxy.execution import sql_bridge
from proxy.semantic.engine import SemanticEngine
from proxy.telemetry.metrics import Metrics


@dataclass
class _KeysOnly:
    """What AccessControl needs of the agent layer, without the agent layer."""

    config: Config
    db: PooledDB
    users_db: PooledDB
    lake: LakePoller | None = None  # no poller: nothing here catches up

    def add_service(self, service: Any) -> None:
        self.db.run_sync(service.install)


@dataclass
class Services:
    config: Config
    engine: Engine
    semantic: SemanticEngine
    agent: AgentLayer
    access: AccessControl
    metrics: Metrics

    @classmethod
    def build(cls, config: Config, engine: Engine | None = None) -> Services:
        """Open (or adopt) the database and build the layers above it, in order."""
        # pg_proc lists the agent functions with their signatures (psql \df): declared with
        # the catalog, its rows are computed once at start (the declare below then finds
        # them declared), not twice (~0.15 s each).
        engine = engine or Engine(
            config, declared=sql_bridge.catalog_declarations(load_functions())
        )
        # Semantic SQL's functions on the users' database, its cache in the agent's.
        semantic = SemanticEngine(config, engine.db, engine.agent_db.db)
        agent = AgentLayer(engine, semantic)
        # pg_proc lists the agent functions with their signatures (psql \df)
        decls = sql_bridge.catalog_declarations(agent.registry)
        agent.users_db.run_sync(lambda cur: catalog_functions.declare(cur, decls))

        def each_database(db: duckdb.DuckDBPyConnection) -> None:
            """What a created database gets as the default one did above."""
            semantic.register_udf(db)
            cur = db.cursor()
            try:
                catalog_functions.declare(cur, decls)
            finally:
                cur.close()

        engine.databases.on_open.append(each_database)
        metrics = Metrics()
        metrics.watch_embedder(semantic.embedder)
        return cls(config, engine, semantic, agent, AccessControl(agent), metrics)

    @staticmethod
    def open_keys(config: Config) -> tuple[Engine, AccessControl]:
        """The server's key store on its own, opened as `build` opens it: for `hatiproxy
        keys` while no server runs. Close with `close_keys`."""
        engine = Engine(config)
        keys_db = PooledDB(engine, size=1, db=engine.agent_db.db, counted=False)  # as AgentLayer.db
        return engine, AccessControl(_KeysOnly(config, keys_db, PooledDB(engine, size=1)))

    @staticmethod
    def close_keys(engine: Engine, access: AccessControl) -> None:
        ownership.release(access.owners)
        access.layer.db.close()
        access.layer.users_db.close()
        engine.close()

    async def scrape_metrics(self) -> bytes:
        """The server's metrics in Prometheus text format (serve with metrics.CONTENT_TYPE)."""
        return await self.metrics.scrape(self.agent.memory.status_counts)
