"""The users' DuckDB database (and beside it the agent layer's), and the worker threads.

One users' database per server, one DuckDB cursor (its own DuckDB connection) per
client session. Every DuckDB call goes through `Engine.run`: a client connection's
own thread (`proxy.db.connection_threads`) runs it directly, and the main event loop
hands it to a thread pool so it never waits on DuckDB. DuckDB releases the GIL
while it works, so both cores are used.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import duckdb

from proxy.core.config import Config
from proxy.core.notify_hub import Hub
from proxy.db.agent_db import AgentDatabase
from proxy.db.agent_move import move_agent_data
from proxy.db.backends import Backends
from proxy.db.catalog.functions import FunctionDecl
from proxy.db.commit_clock import CLOCK
from proxy.db.conflicts import again_on_conflict
from proxy.db.connection_threads import on_connection_thread
from proxy.db.databases import DEFAULT_NAME, DEFAULT_OID, Databases
from proxy.db.lake import attach_lake, detach_lake, redact
from proxy.db.opening import EXTENSIONS, DatabaseInUse, OpenedFile
from proxy.db.watchdog import Watchdog

log = logging.getLogger("hatiproxy.engine")
T = TypeVar("T")

__all__ = ["EXTENSIONS", "DatabaseInUse", "Engine"]


def _counted(fn: Callable[..., T], *args: object) -> T:
    with CLOCK.writing():
        return fn(*args)


class Engine:
    def __init__(self, config: Config, declared: Sequence[FunctionDecl] = ()) -> None:
        """declared: functions pg_proc lists beside the built-in ones (install())."""
        self.config = config
        self.database_name = DEFAULT_NAME  # what clients see: current_database(), pg_database
        self.database_oid = DEFAULT_OID
        self._declared = declared
        self.users = OpenedFile(config, config.database_path)
        self.db = self.users.db
        self.in_memory = self.users.in_memory
        self.unclean_start = self.users.unclean_start
        self.extensions = self.users.extensions
        try:
            # The agent layer's data, in a database of its own that is never attached to
            # this one: no client statement can name it (proxy/db/agent_db.py).
            self.agent_db = AgentDatabase(config)
        except BaseException:
            self.users.close()
            raise
        # The live wire connections: pg_stat_activity and the signal functions read them.
        self.backends = Backends()
        self.notify_hub = Hub()  # LISTEN / NOTIFY between sessions (proxy/pgserver/notify_wire.py)
        # A data directory of the previous layout keeps agent data in the users' file
        # (before the catalog install, which changes what current_database() names).
        move_agent_data(self.db, self.agent_db.db)
        # With a DuckLake catalog the users' tables live in the lake, shared by every proxy
        # of it: it becomes the default database before the catalog emulation is installed
        # (which reads and names current_database()).
        self._local_db: str | None = None
        if config.lake_catalog:
            try:
                self._local_db = attach_lake(self.db, config.lake_catalog, config.lake_data)
            except BaseException:
                self.agent_db.close()
                self.users.close()
                raise
        self.lake = self._local_db is not None
        # what the start-up line names as the users' database (no catalog password)
        self.description = (
            f"DuckLake {redact(config.lake_catalog)} (local file {config.database_path})"
            if self.lake
            else config.database_path
        )
        # CREATE DATABASE's databases (pg_database lists them: read before the catalog)
        self.databases = Databases(self)
        self._install_catalog(declared)
        try:
            self.agent_db.wait_shared()  # the agent lake, attached meanwhile (agent_db.py)
        except BaseException:
            self.agent_db.close()
            if self._local_db is not None:
                detach_lake(self.db, self._local_db)
            self.users.close()
            raise
        # For DuckDB work started on the main loop (agent layer, MCP and REST requests;
        # wire clients run theirs on their own threads): one slow call must never queue
        # another behind it.
        self.executor = ThreadPoolExecutor(
            max_workers=config.max_connections + 8, thread_name_prefix="duckdb"
        )
        self.watchdog = Watchdog()  # statement timeouts and vanished clients of wire sessions

    def _install_catalog(self, declared: Sequence[FunctionDecl]) -> None:
        from proxy.db.catalog.install import search_path
        from proxy.db.settings import server_defaults

        # The configured statement log settings: sessions start with them, SHOW and
        # pg_settings print them.
        server_defaults(
            {
                "log_statement": self.config.log_statement,
                "log_min_duration_statement": str(self.config.log_min_duration_statement),
            }
        )
        # proxies started at once create the lake's shared registry table together
        again_on_conflict(lambda: self._install(declared), attempts=3 if self.lake else 1)
        self._search_path = search_path(self.db)

    def _install(self, declared: Sequence[FunctionDecl]) -> None:
        from proxy.db.catalog import install

        install(
            self.db,
            database_name=self.database_name,
            database_oid=self.database_oid,
            databases=self.databases.rows,
            users=list(self.config.user_passwords),
            backends=self.backends,
            declared=declared,
        )

    @property
    def is_default(self) -> bool:
        """Whether this is the server's default database (the agent layer's, keys')."""
        return self.database_oid == DEFAULT_OID

    def on(self, opened: OpenedFile, name: str, oid: int) -> Engine:
        """This server's engine on another users' database (proxy/db/databases.py): the
        same agent database, worker threads and live connections; its catalog installed."""
        from proxy.db.catalog.install import search_path

        other = copy.copy(self)
        other.users, other.db = opened, opened.db
        other.in_memory, other.unclean_start = opened.in_memory, opened.unclean_start
        other.extensions = opened.extensions
        other.database_name, other.database_oid = name, oid
        other._local_db = None
        other.description = opened.path
        other._install(self._declared)
        other._search_path = search_path(opened.db)
        return other

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new DuckDB connection on the shared database, ready for a client session."""
        cur = self.db.cursor()
        # search_path is per connection: the pg_catalog stand-ins must be on it.
        cur.execute("SET search_path = '" + self._search_path.replace("'", "''") + "'")
        return cur

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        if on_connection_thread():  # a client's own thread: waiting here delays no one else
            return fn(*args)
        # Main-loop work (agent layer, MCP, REST) may write and commit on its own: the
        # commit clock counts all of it (savepoint replays), inside the worker thread so
        # that a cancelled await cannot end the count before the work ends.
        return await self._in_pool(_counted, fn, *args)

    async def run_uncounted(self, fn: Callable[..., T], *args: object) -> T:
        """`run` for main-loop work that writes nothing or counts its own commits."""
        if on_connection_thread():
            return fn(*args)
        return await self._in_pool(fn, *args)

    async def _in_pool(self, fn: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        return await loop.run_in_executor(self.executor, ctx.run, fn, *args)

    def close(self) -> None:
        """Close the server's databases (on the default database's engine only)."""
        self.databases.close()
        self.watchdog.stop()
        self.executor.shutdown(wait=True, cancel_futures=True)
        try:
            self.agent_db.close()
        finally:
            if self._local_db is not None:
                detach_lake(self.db, self._local_db)
            self.users.close()
