"""Opening a DuckDB database file the server owns: lock conflicts, extensions, the
clean-shutdown marker and the HNSW rebuild an unclean stop needs.

Both databases (the users' and the agent layer's, see proxy/db/agent_db.py) open the
same way.
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path

import duckdb

from proxy.core.config import Config

log = logging.getLogger("hatiproxy.engine")

EXTENSIONS = ("vss", "fts")
CLEAN_MARKER = ".hatiproxy-open"  # present while the database is open: unclean if found at start

# DuckDB's words when another process holds the file: `... Conflicting lock is held in
# /usr/bin/python3.11 (PID 3596) ...` (the holder's program and PID, where it knows them).
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


class DatabaseInUse(Exception):
    """Another process (another server on the same data directory) holds the database file."""

    def __init__(self, config: Config, duckdb_message: str, path: str | None = None) -> None:
        file = Path(path or config.database_path)
        where = f"database file {file}"
        if file.parent == Path(config.data_dir):
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


def load_extensions(conn: duckdb.DuckDBPyConnection) -> list[str]:
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


class OpenedFile:
    """One DuckDB database opened by the server: the connection, whether the last stop was
    clean, and the extensions loaded."""

    def __init__(self, config: Config, path: str, threads: int | None = None) -> None:
        """`threads`: DuckDB's thread count (0 = DuckDB's default); None = duckdb_threads."""
        self.path = path
        self.in_memory = path == ":memory:"
        marker = None if self.in_memory else Path(path + CLEAN_MARKER)
        self.unclean_start = False
        if marker is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.unclean_start = marker.exists()
        # No Python-variable replacement scans (`FROM t` must never read a Python object of
        # the server), no extension downloads (they come from wheels, offline).
        db_config: dict[str, str] = {
            "python_enable_replacements": "false",
            "autoinstall_known_extensions": "false",
            # DuckDB's allocator (jemalloc) gives freed pages back only when an allocation
            # happens to tick its decay; a background thread does it on time. Measured
            # under bench/rss.py: jemalloc's resident memory 63-81 MiB with it, 69-104 MiB
            # and rising without, for the same ~50 MiB allocated.
            "allocator_background_threads": "true",
        }
        threads = config.duckdb_threads if threads is None else threads
        if threads:
            db_config["threads"] = str(threads)
        if config.duckdb_memory_limit:
            db_config["memory_limit"] = config.duckdb_memory_limit
        try:
            self.db = duckdb.connect(path, config=db_config)
        except duckdb.IOException as exc:
            if _is_lock_conflict(exc):
                raise DatabaseInUse(config, str(exc), path) from None
            raise
        if marker is not None:  # only once the file is ours: a refused start leaves it be
            marker.write_text(str(os.getpid()))
        self.extensions = load_extensions(self.db)
        if "vss" in self.extensions:
            self.db.execute("SET GLOBAL hnsw_enable_experimental_persistence = true")
            if self.unclean_start:
                rebuild_hnsw_indexes(self.db)

    def close(self) -> None:
        try:
            if not self.in_memory:
                self._checkpoint()
        finally:
            self.db.close()
            if not self.in_memory:
                Path(self.path + CLEAN_MARKER).unlink(missing_ok=True)

    def _checkpoint(self) -> None:
        """The last checkpoint. When a transaction is still open on another cursor
        (`Cannot CHECKPOINT: there are other write transactions active`), nothing it did
        was committed, so nothing acknowledged depends on it: the database closes without
        a checkpoint and the next start replays the WAL. (FORCE CHECKPOINT would abort
        that transaction, but can wait for it without end: shutdown must end in 10 s.)"""
        try:
            self.db.execute("CHECKPOINT")
        except duckdb.Error as exc:
            log.warning(
                "%s: no checkpoint at shutdown (%s); the next start replays the WAL",
                self.path,
                str(exc).splitlines()[0],
            )


def rebuild_hnsw_indexes(db: duckdb.DuckDBPyConnection) -> None:
    """HNSW indexes have no WAL recovery: after an unclean stop, rebuild them from data."""
    rows = db.execute(
        "SELECT index_name, sql FROM system.main.duckdb_indexes() WHERE sql ILIKE '%USING HNSW%'"
    ).fetchall()
    for name, sql in rows:
        log.info("rebuilding HNSW index %s after an unclean shutdown", name)
        started = time.monotonic()
        db.execute(f'DROP INDEX "{name}"')
        db.execute(sql)
        log.warning(
            "rebuilt HNSW index %s after an unclean shutdown (%.1f s)",
            name,
            time.monotonic() - started,
        )
