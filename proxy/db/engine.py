"""The shared DuckDB database: opening it, extensions, and the worker threads.

One database per server, one DuckDB cursor (its own DuckDB connection) per
client session. Every DuckDB call goes through `Engine.run`: a client connection's
own thread (`proxy.db.connection_threads`) runs it directly, and the main event loop
hands it to a thread pool so it never waits on DuckDB. DuckDB releases the GIL
while it works, so both cores are used.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import duckdb

from proxy.core.config import Config
from proxy.db.backends import Backends
from proxy.db.commit_clock import CLOCK
from proxy.db.connection_threads import on_connection_thread
from proxy.db.watchdog import Watchdog

log = logging.getLogger("hatiproxy.engine")
T = TypeVar("T")

EXTENSIONS = ("vss", "fts")
_CLEAN_MARKER = ".hatiproxy-open"  # present while the database is open: unclean if found at start


# DuckDB's words when another process holds the file: `... Conflicting lock is held in
# /usr/bin/python3.11 (PID 3596) ...` (the holder's program and PID, where it knows them).
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


class DatabaseInUse(Exception):
    """Another process (another server on the same data directory) holds the database file."""

    def __init__(self, config: Config, duckdb_message: str) -> None:
        path = Path(config.database_path)
        where = f"database file {path}"
        if path.parent == Path(config.data_dir):
            where += f" (data directory {config.data_dir})"
        found = _LOCK_HOLDER.search(duckdb_message)
        holder = f"process {found['pid']} ({found['program']})" if found else "another process"
        self.pid = int(found["pid"]) if found else None
        super().__init__(
            f"the {where} is locked by {holder}: is another hatiproxy server running on it? "
            "Stop that one, or start this one with another --data-dir or --database."
        )


def _is_lock_conflict(exc: duckdb.Error) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def _counted(fn: Callable[..., T], *args: object) -> T:
    with CLOCK.writing():
        return fn(*args)


def _load_extensions(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """Load the bundled extensions from their PyPI wheels (no download at run time)."""
    import duckdb_extensions

    loaded = []
    for name in EXTENSIONS:
        try:
            duckdb_extensions.import_extension(name)
            conn.execute(f"LOAD {name}")
            loaded.append(name)
        except Exception as exc:  # a missing wheel must not stop plain SQL
            log.warning("DuckDB extension %s not available: %s", name, exc)
    return loaded


class Engine:
    def __init__(self, config: Config) -> None:
        self.config = config
        path = config.database_path
        self.in_memory = path == ":memory:"
        marker = None if self.in_memory else Path(path + _CLEAN_MARKER)
        self.unclean_start = False
        if marker is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.unclean_start = marker.exists()
        # No Python-variable replacement scans (`FROM t` must never read a Python object of
        # the server), no extension downloads (they come from wheels, offline).
        db_config: dict[str, str] = {
            "python_enable_replacements": "false",
            "autoinstall_known_extensions": "false",
        }
        if config.duckdb_threads:
            db_config["threads"] = str(config.duckdb_threads)
        if config.duckdb_memory_limit:
            db_config["memory_limit"] = config.duckdb_memory_limit
        try:
            self.db = duckdb.connect(path, config=db_config)
        except duckdb.IOException as exc:
            if _is_lock_conflict(exc):
                raise DatabaseInUse(config, str(exc)) from None
            raise
        if marker is not None:  # only once the file is ours: a refused start leaves it be
            marker.write_text(str(os.getpid()))
        # The live wire connections: pg_stat_activity and the signal functions read them.
        self.backends = Backends()
        self.extensions = _load_extensions(self.db)
        if "vss" in self.extensions:
            self.db.execute("SET GLOBAL hnsw_enable_experimental_persistence = true")
            if self.unclean_start:
                self._rebuild_hnsw_indexes()
        self._install_catalog()
        # For DuckDB work started on the main loop (agent layer, MCP and REST requests;
        # wire clients run theirs on their own threads): one slow call must never queue
        # another behind it.
        self.executor = ThreadPoolExecutor(
            max_workers=config.max_connections + 8, thread_name_prefix="duckdb"
        )
        self.watchdog = Watchdog()  # statement timeouts and vanished clients of wire sessions

    def _rebuild_hnsw_indexes(self) -> None:
        """HNSW indexes have no WAL recovery: after an unclean stop, rebuild them from data."""
        rows = self.db.execute(
            "SELECT index_name, sql FROM duckdb_indexes() WHERE sql ILIKE '%USING HNSW%'"
        ).fetchall()
        for name, sql in rows:
            log.info("rebuilding HNSW index %s after an unclean shutdown", name)
            started = time.monotonic()
            self.db.execute(f'DROP INDEX "{name}"')
            self.db.execute(sql)
            log.warning(
                "rebuilt HNSW index %s after an unclean shutdown (%.1f s)",
                name,
                time.monotonic() - started,
            )

    def _install_catalog(self) -> None:
        from proxy.db.catalog import install
        from proxy.db.catalog.install import search_path

        install(self.db, users=list(self.config.user_passwords), backends=self.backends)
        self._search_path = search_path(self.db)

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
        self.watchdog.stop()
        self.executor.shutdown(wait=True, cancel_futures=True)
        try:
            if not self.in_memory:
                self.db.execute("CHECKPOINT")
        finally:
            self.db.close()
            if not self.in_memory:
                Path(self.config.database_path + _CLEAN_MARKER).unlink(missing_ok=True)
