"""The server's users' databases: the default one, and those CREATE DATABASE made.

Each database is a DuckDB file of its own (`<data dir>/databases/<oid>.duckdb`), opened
in its own DuckDB instance with the catalog emulation installed, when a client first
connects to it by name. Two instances cannot name each other's tables (client SQL can
never ATTACH), so a session sees exactly its database, whatever names it computes: the
separation comes from where the data lives, not from reading the SQL.

A database name nobody created reaches the default database, as every name did before
(clients connect with `postgres`, their user name, ...). The agent layer (memories,
keys, the model) stays one per server, on the default database. The list of created
databases is kept in the agent database (`hatidata_internal.databases`), out of clients'
reach. Server superusers create, drop and connect to any database. An organisation's
admin API key may create one, which is its organisation's: that organisation's keys
connect to it (no other key does) and its admin keys drop or rename it
(proxy/pgserver/databases.py). Owner records and the organisation boundary between keys
are the default database's, where organisations share one catalog; in an organisation's
own database everything is that organisation's, and the boundary is the database itself.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import duckdb

from proxy.core.config import Config
from proxy.core.names import INTERNAL_SCHEMA
from proxy.db.opening import CLEAN_MARKER, OpenedFile
from proxy.wire.errors import PgError


class Engine(Protocol):
    """What this module uses of an engine (proxy/db/engine.py, which imports this one)."""

    config: Config
    agent_db: Any  # proxy.db.agent_db.AgentDatabase
    users: OpenedFile
    db: duckdb.DuckDBPyConnection
    in_memory: bool
    lake: bool
    database_name: str

    @property
    def is_default(self) -> bool: ...

    def on(self, opened: OpenedFile, name: str, oid: int) -> Engine: ...


log = logging.getLogger("hatiproxy.databases")

DEFAULT_NAME = "hatidata"  # what clients see as the default database (pg_database)
DEFAULT_OID = 16384
TABLE = f"{INTERNAL_SCHEMA}.databases"
# CREATE DATABASE's templates that give an empty database (PostgreSQL's initdb ones).
EMPTY_TEMPLATES = frozenset({"template0", "template1"})


def in_use_error(name: str, count: int, *, source: bool = False) -> PgError:
    """PostgreSQL's 55006 for a database other sessions are on."""
    what = "source database" if source else "database"
    sessions = "There is 1 other session" if count == 1 else f"There are {count} other sessions"
    return PgError(
        "55006",
        f'{what} "{name}" is being accessed by other users',
        detail=f"{sessions} using the database.",
    )


@dataclass(frozen=True, slots=True)
class Created:
    name: str
    oid: int
    owner: str
    # The organisation whose API key created it: its keys (and the server's superusers)
    # connect to it, no other key does; None: a superuser's, keys do not connect.
    org: str | None = None


class Databases:
    """name -> database; opened on first use, safe to use from any thread."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine  # the default database's
        self._lock = threading.RLock()
        self._open: dict[str, Engine] = {}
        self._sessions: Counter[str] = Counter()  # sessions whose cursor is on a database
        # Run on each created database's DuckDB once its catalog is in (the semantic SQL
        # functions, pg_proc's agent functions: proxy/execution/services.py).
        self.on_open: list[Callable[[duckdb.DuckDBPyConnection], None]] = []
        cur = engine.agent_db.db.cursor()
        try:
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} (name VARCHAR PRIMARY KEY, oid BIGINT NOT "
                "NULL, owner VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), org VARCHAR)"
            )
            columns = [d[0] for d in cur.execute(f"SELECT * FROM {TABLE} LIMIT 0").description]
            if "org" not in columns:  # a data directory from before organisations' databases
                cur.execute(f"ALTER TABLE {TABLE} ADD COLUMN org VARCHAR")
                # not left in the WAL: DuckDB cannot replay an ALTER TABLE of an ATTACHed
                # database (`hatiproxy keys` opens this one so after a crash)
                cur.execute("CHECKPOINT")
            rows = cur.execute(f"SELECT name, oid, owner, org FROM {TABLE} ORDER BY oid").fetchall()
        finally:
            cur.close()
        # Replaced whole under the lock, never changed in place: read without the lock (a
        # login or a pg_database read never waits for a database being opened).
        self._created = {row[0]: Created(*row) for row in rows}
        # never an oid again in this process: DuckDB keeps an instance by its file's path
        # while any cursor of it lives
        self._last_oid = max([DEFAULT_OID, *(c.oid for c in self._created.values())])

    # --- what clients see ----------------------------------------------------------

    def rows(self) -> list[tuple[int, str]]:
        """pg_database's (oid, name) rows, the default database first."""
        return [(DEFAULT_OID, DEFAULT_NAME)] + [(c.oid, c.name) for c in self._created.values()]

    def created(self, name: str) -> Created | None:
        return self._created.get(name)

    def admits(self, name: str, org: str) -> bool:
        """Whether an API key of organisation `org` may connect to created database `name`:
        only to one its organisation created."""
        record = self.created(name)
        return record is not None and record.org == org

    def exists(self, name: str) -> bool:
        return name == DEFAULT_NAME or self.created(name) is not None

    # --- sessions ------------------------------------------------------------------

    def engine_for(self, name: str) -> Engine:
        """The engine a session connecting with database `name` runs on (the default
        database's for a name nobody created). Opens the database on first use (~1 s).
        The session calls `release` once its cursor is closed."""
        if name not in self._created:
            return self._engine  # (no lock: the default database is never waited for)
        with self._lock:
            engine = self._engine_of(name)
            if not engine.is_default:
                self._sessions[name] += 1
            return engine

    def _engine_of(self, name: str) -> Engine:
        """(Under the lock.)"""
        record = self._created.get(name)
        if record is None:
            return self._engine
        engine = self._open.get(name)
        if engine is None:
            engine = self._open[name] = self._opened(record)
        return engine

    def release(self, engine: Engine) -> None:
        if engine.is_default:
            return
        with self._lock:
            self._sessions[engine.database_name] -= 1
            if self._sessions[engine.database_name] <= 0:
                del self._sessions[engine.database_name]

    def in_use(self, name: str) -> int:
        """How many sessions have a cursor on database `name`."""
        with self._lock:
            return self._sessions.get(name, 0)

    def _path(self, oid: int) -> str:
        if self._engine.in_memory:
            return ":memory:"
        return str(Path(self._engine.config.database_path).parent / "databases" / f"{oid}.duckdb")

    def _opened(self, record: Created) -> Engine:
        opened = OpenedFile(self._engine.config, self._path(record.oid))
        try:
            engine = self._engine.on(opened, record.name, record.oid)
            for hook in self.on_open:
                hook(opened.db)
        except BaseException:
            opened.close()
            raise
        log.info('database "%s" opened (%s)', record.name, opened.path)
        return engine

    # --- CREATE / DROP DATABASE -----------------------------------------------------

    def create(self, name: str, owner: str, template: str | None, org: str | None = None) -> None:
        """A new database; `template`: one to copy (PostgreSQL's rule that nobody else is
        connected to it is the caller's: proxy/pgserver/databases.py)."""
        if self._engine.lake:
            raise PgError(
                "0A000",
                "CREATE DATABASE is not supported with a DuckLake catalog: the lake is the "
                "server's one database.",
            )
        with self._lock:
            if self.exists(name):
                raise PgError("42P04", f'database "{name}" already exists')
            copied = template is not None and template not in EMPTY_TEMPLATES
            if copied and not self.exists(template):
                raise PgError("3D000", f'template database "{template}" does not exist')
            oid = self._last_oid = self._last_oid + 1
            record = Created(name, oid, owner, org)
            path = self._path(oid)
            _remove_files(path)  # a file left by a crash between its copy and its record
            if copied:
                self._copy(template, path)
            engine = self._opened(record)
            try:
                cur = self._engine.agent_db.db.cursor()
                try:
                    cur.execute(
                        f"INSERT INTO {TABLE} (name, oid, owner, org) VALUES (?, ?, ?, ?)",
                        [name, oid, owner, org],
                    )
                finally:
                    cur.close()
            except BaseException:
                engine.users.close()
                _remove_files(path)
                raise
            self._created = {**self._created, name: record}
            self._open[name] = engine

    def _copy(self, template: str, path: str) -> None:
        """The template's file, checkpointed, copied (no one is connected to it)."""
        if self._engine.in_memory:
            raise PgError(
                "0A000",
                "CREATE DATABASE ... TEMPLATE of a database needs a database file: this "
                "server keeps its databases in memory.",
            )
        source = self._engine_of(template)
        source.db.execute("CHECKPOINT")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source.users.path, path)

    def drop(self, name: str) -> None:
        """Forget database `name` and remove its file (no session is on it any more)."""
        with self._lock:
            record = self._created.get(name)
            if record is None:
                raise PgError("3D000", f'database "{name}" does not exist')
            if self._sessions.get(name):  # one connected since the caller looked
                raise in_use_error(name, self._sessions[name])
            cur = self._engine.agent_db.db.cursor()
            try:
                cur.execute(f"DELETE FROM {TABLE} WHERE name = ?", [name])
            finally:
                cur.close()
            self._created = {k: v for k, v in self._created.items() if k != name}
            engine = self._open.pop(name, None)
            path = self._path(record.oid)
        if engine is not None:
            engine.users.db.close()  # its data goes: no last checkpoint
        _remove_files(path)
        log.info('database "%s" dropped', name)

    def rename(self, name: str, new_name: str) -> None:
        """Database `name` is called `new_name` from now on (no session is on it). Its
        instance closes: the catalog, which names it, is installed anew at the next open."""
        with self._lock:
            record = self._created.get(name)
            if record is None:
                raise PgError("3D000", f'database "{name}" does not exist')
            if self.exists(new_name):
                raise PgError("42P04", f'database "{new_name}" already exists')
            if self._sessions.get(name):
                raise in_use_error(name, self._sessions[name])
            cur = self._engine.agent_db.db.cursor()
            try:
                cur.execute(f"UPDATE {TABLE} SET name = ? WHERE name = ?", [new_name, name])
            finally:
                cur.close()
            kept = {k: v for k, v in self._created.items() if k != name}
            self._created = {**kept, new_name: dataclasses.replace(record, name=new_name)}
            engine = self._open.pop(name, None)
        if engine is not None:
            engine.users.close()

    def close(self) -> None:
        with self._lock:
            engines, self._open = list(self._open.values()), {}
        for engine in engines:
            try:
                engine.users.close()
            except Exception as exc:  # the others still close
                log.warning('closing database "%s": %s', engine.database_name, exc)


def _remove_files(path: str) -> None:
    if path == ":memory:":
        return
    for suffix in ("", ".wal", CLEAN_MARKER):
        Path(path + suffix).unlink(missing_ok=True)
