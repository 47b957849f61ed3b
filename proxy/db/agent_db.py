"""The agent layer's own DuckDB database: memories, vectors, state, ledger, triggers,
branch metadata, keys, usage and the embedding cache.

Why a database of its own: client SQL runs on the users' database, and anything in a
database a client statement runs on can be named by it, literally or computed
(`query_table('hati' || 'data_internal.t')`, a view, a macro, EXECUTE ...). No text
check can close that. This database is opened with its own `duckdb.connect` and never
attached to the users' one (DuckDB also refuses to ATTACH a file another database of
the process has open), so no client statement can reach it at all: only the agent
layer's pooled cursors (proxy/db/pool.py) read and write it, and a connection sees its
own agent rows only as relations the server registers for its statement
(proxy/execution/sql_bridge.py).

The file sits beside the users' (`<stem>.agent.duckdb`, Config.agent_database_path),
`:memory:` when the users' database is. It opens like the users' one: the same
extensions, the clean-shutdown marker, HNSW rebuild after an unclean stop, a checkpoint
at close; but with threads of its own (`agent_duckdb_threads`, default 1, not
`duckdb_threads`). The schema keeps its old name, `hatidata_internal`, so the services' SQL is the
same as when it lived in the users' file.

With `lake_catalog` set, the agent layer's shared store (proxy/db/agent_lake.py) is
attached to this instance, and only to it: what is shared (memories, for now) is copied
between it and the local tables by the owning service.
"""

from __future__ import annotations

import threading

import duckdb

from proxy.core.config import Config
from proxy.core.names import INTERNAL_SCHEMA
from proxy.db.agent_lake import attach_agent_lake, detach_agent_lake
from proxy.db.opening import OpenedFile


class AgentDatabase:
    def __init__(self, config: Config) -> None:
        # Threads of its own (agent_duckdb_threads, default 1): its statements are short,
        # and with a worker thread the connection's thread only waits for it, taking the
        # GIL on each turn of duckdb-python's wait loop.
        self.file = OpenedFile(
            config, config.agent_database_path, threads=config.agent_duckdb_threads
        )
        self.db = self.file.db
        self.path = self.file.path
        self.db.execute(f"CREATE SCHEMA IF NOT EXISTS {INTERNAL_SCHEMA}")
        self.shared = bool(config.lake_catalog)  # whether the agent lake is attached
        # Attached on a thread of its own while the users' database opens (each costs
        # seconds of catalog round trips); `wait_shared` joins it. ATTACH is per
        # instance, so the cursor it runs on does not matter.
        self._attach_error: BaseException | None = None
        self._attaching: threading.Thread | None = None
        if self.shared:
            self._attaching = threading.Thread(
                target=self._attach, args=(config,), name="hatiproxy-agent-lake", daemon=True
            )
            self._attaching.start()

    def _attach(self, config: Config) -> None:
        cur = self.db.cursor()
        try:
            attach_agent_lake(cur, config.lake_catalog, config.lake_data)
        except BaseException as exc:
            self._attach_error = exc
        finally:
            cur.close()

    def wait_shared(self) -> None:
        """Wait for the agent lake's ATTACH; raise what it raised (LakeUnavailable)."""
        if self._attaching is not None:
            self._attaching.join()
            self._attaching = None
        if self._attach_error is not None:
            raise self._attach_error

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self.db.cursor()

    def close(self) -> None:
        if self._attaching is not None:  # closing after a failed start: let it finish
            self._attaching.join()
        if (
            self.shared and self._attach_error is None
        ):  # the local checkpoint must not run lake maintenance
            detach_agent_lake(self.db)
        self.file.close()
