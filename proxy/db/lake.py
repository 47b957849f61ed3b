"""The users' database as a DuckLake: table metadata in a catalog database (PostgreSQL),
data files on a shared path, so several hatiproxy processes serve the same tables.

With `lake_catalog` set, the engine ATTACHes `ducklake:<lake_catalog>` and makes it the
default database (`USE`): unqualified names, `current_database()` and the pg_catalog
emulation (keyed on `current_database()`, proxy/db/catalog/install.py) then all name the
lake, and every DuckDB connection of the process sees it. The server's local file stays
open beside it (the agent database is still local: it is not shared yet).

Every statement outside an explicit transaction is a DuckLake transaction of its own: it
reads the latest snapshot the catalog has, so what another proxy committed is seen by the
next statement; two transactions changing the same rows conflict at commit and the
later one fails (TransactionException "... conflict ...", SQLSTATE 40001 in
proxy/db/duckdb_errors.py), never a silent lost update.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import duckdb

log = logging.getLogger("hatiproxy.engine")

LAKE_DB = "lake"  # the attached DuckLake's name inside DuckDB (clients see `hatidata`)
LAKE_EXTENSIONS = ("ducklake", "postgres")
# import_extension INSTALLs through DuckDB's default connection: the agent lake is
# attached on a thread of its own (proxy/db/agent_db.py) while the users' lake attaches.
_LOADING = threading.Lock()
DEFAULT_COMPRESSION = "uncompressed"  # the lake's Parquet files, unless the catalog names one
DEFAULT_PARQUET_VERSION = "2"  # (FILE_OPTIONS below says why)


class LakeUnavailable(Exception):
    """The DuckLake catalog or its extensions could not be opened: the server cannot start."""


_PASSWORD = re.compile(r"""(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s"']+)""", re.IGNORECASE)
_URI_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")


def redact(catalog: str) -> str:
    """The catalog string without its password, for logs and error messages."""
    return _URI_PASSWORD.sub(r"\1***@", _PASSWORD.sub(r"\1***", catalog))


def lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def load_lake_extensions(conn: duckdb.DuckDBPyConnection) -> None:
    """ducklake and postgres from their PyPI wheels (no download at run time)."""
    try:
        import duckdb_extensions
    except ImportError as exc:
        raise LakeUnavailable(
            "lake_catalog needs the duckdb_extensions package: pip install "
            "duckdb-extension-ducklake==1.5.5 duckdb-extension-postgres==1.5.5"
        ) from exc
    with _LOADING:
        _load(duckdb_extensions, conn)


def _load(duckdb_extensions: Any, conn: duckdb.DuckDBPyConnection) -> None:
    for name in LAKE_EXTENSIONS:
        try:
            duckdb_extensions.import_extension(name)
            conn.execute(f"LOAD {name}")
        except Exception as exc:
            raise LakeUnavailable(
                f"lake_catalog needs the DuckDB extension {name}: pip install "
                f"duckdb-extension-{name}==1.5.5 ({exc})"
            ) from exc


def attach_lake(conn: duckdb.DuckDBPyConnection, catalog: str, data_path: str) -> str:
    """ATTACH the DuckLake and make it the default database of `conn` (and so of the
    cursors made from it, which get `<lake>.main` first on their search_path).
    Returns the name of the database that was the default before (the local file)."""
    load_lake_extensions(conn)
    local = conn.execute("SELECT system.main.current_database()").fetchone()[0]
    # No data inlining: with it each statement reading a table also asks the catalog for
    # the table's schema version and inlined rows, 6 PostgreSQL queries per point SELECT
    # instead of 4 (counted with pg_debug_show_queries, DuckLake 1.5.5; in-process ~17 ms
    # -> ~10 ms). Small inserts then write small Parquet files: compact them with
    # ducklake_merge_adjacent_files.
    # HATIDATA_LAKE_INLINE_ROWS=10 gives DuckLake's own default back.
    inline = int(os.environ.get("HATIDATA_LAKE_INLINE_ROWS", "0"))
    options = f" (DATA_INLINING_ROW_LIMIT {inline}" + (
        f", DATA_PATH {lit(data_path)})" if data_path else ")"
    )
    try:
        with catalog_pool(conn):
            attach_with_retry(conn, f"ATTACH {lit('ducklake:' + catalog)} AS {LAKE_DB}{options}")
    except duckdb.Error as exc:
        raise LakeUnavailable(
            f"cannot open the DuckLake catalog {redact(catalog)!r}"
            + (f" with data path {data_path!r}" if data_path else "")
            + f": {redact(' '.join(str(exc).split()))}. Check --lake-catalog (e.g. 'postgres:dbname=lake host=db.internal "
            "user=hati') and that the PostgreSQL server accepts this proxy; every proxy of "
            "one lake needs the same catalog and a --lake-data path they all reach."
        ) from None
    _default_file_options(conn)
    _reader_settings(conn)
    conn.execute(f"USE {LAKE_DB}")
    log.info(
        "users' database is the DuckLake %s (data %s)", redact(catalog), data_path or "(stored)"
    )
    return local


@contextlib.contextmanager
def catalog_pool(conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The postgres extension's pool settings for the catalog pool a DuckLake ATTACH inside
    this block creates (the users' lake and the agent lake alike). The settings are read
    at attach and then reset, so that a client's own postgres ATTACH keeps the defaults."""
    # The pool sends `SELECT 1` to PostgreSQL each time it hands out a pooled connection:
    # ~2 extra round trips per statement (and an idle proxy's agent-lake poller sent ~8 a
    # second). Off: a connection the catalog server dropped then fails one statement
    # instead of being replaced first.
    health = os.environ.get("HATIDATA_LAKE_PG_HEALTH_CHECK", "")
    conn.execute(f"SET pg_pool_health_check_query = {lit(health)}")
    # The pool keeps at most this many idle connections (default 4); a statement that
    # finds none idle opens a new one (a PostgreSQL backend: fork, login, setup), and
    # the surplus is closed on release. With 4 clients on one proxy the default pool
    # opened a new catalog connection every ~3 statements (PG log_connections); idle
    # ones are closed after pg_pool_idle_timeout_millis (60 s).
    pool = int(os.environ.get("HATIDATA_LAKE_PG_POOL", "32"))
    conn.execute(f"SET pg_pool_max_connections = {pool}")
    try:
        yield
    finally:
        conn.execute("RESET pg_pool_health_check_query")
        conn.execute("RESET pg_pool_max_connections")


# The Parquet options hatiproxy gives a lake whose catalog names none: (DuckLake option,
# environment variable that picks another value, hatiproxy's value). Measured through
# hatiproxy with the 22 TPC-H queries at scale factor 1 (bench/lake_tpch.py, issue 25):
# - codec: DuckDB's default (snappy) took 2.03x the local file's time, LZ4 1.74x,
#   uncompressed 1.48x, at the price of larger files;
# - Parquet format version 2 (DELTA_BINARY_PACKED integers, DELTA_LENGTH_BYTE_ARRAY
#   strings): lineitem 253 MB instead of 374 MB, and the 22 queries took 1.30x the
#   file's wall-clock and 1.55x its CPU (proxy + catalog) against 1.35x and 1.62x with
#   version 1 files, in the same run (load average ~24); on a quiet machine both
#   layouts took ~1.4x (the saving is CPU, which a loaded machine lacks).
FILE_OPTIONS = (
    ("parquet_compression", "HATIDATA_LAKE_PARQUET_COMPRESSION", DEFAULT_COMPRESSION),
    ("parquet_version", "HATIDATA_LAKE_PARQUET_VERSION", DEFAULT_PARQUET_VERSION),
)


def _default_file_options(conn: duckdb.DuckDBPyConnection) -> None:
    """The Parquet files the lake writes from now on get hatiproxy's codec and format
    version unless the catalog already names one (an operator's choice, stored in the
    lake, is kept). The options live in the catalog and are no snapshot; files already
    written keep theirs until rewritten."""
    # An attached lake keeps the options it read at ATTACH: one set by a proxy started at
    # the same moment, after this one attached, is in the catalog but not in this
    # process, which then wrote version 1 files (CI, tests/lake). So every option is
    # set here, a stored one to its stored value (DuckLake shows version 2 as 'V2').
    stored = dict(
        conn.execute("SELECT option_name, value FROM ducklake_options(?)", [LAKE_DB]).fetchall()
    )
    for option, env, default in FILE_OPTIONS:
        value = stored.get(option) or os.environ.get(env, default)
        if not value:
            continue
        if option == "parquet_version":
            value = value.removeprefix("V")
        # proxies starting at once write the same catalog rows: the loser's commit
        # conflicts, and its own process would keep the lake's defaults
        for attempt in range(6):
            try:
                conn.execute(f"CALL {LAKE_DB}.set_option({lit(option)}, {lit(value)})")
                break
            except duckdb.Error as exc:
                if attempt == 5:
                    log.warning("DuckLake %s not set (%s); files keep the lake's", option, exc)
                else:
                    time.sleep(0.05 * (attempt + 1))


def _reader_settings(conn: duckdb.DuckDBPyConnection) -> None:
    """How this process reads the lake's Parquet files (instance-wide DuckDB settings)."""
    # A lake file never changes once written (a rewrite is a new file), so its footer
    # (schema, row groups, column statistics) is parsed once, not on every scan.
    cache = os.environ.get("HATIDATA_LAKE_PARQUET_METADATA_CACHE", "1") != "0"
    conn.execute(f"SET GLOBAL parquet_metadata_cache = {str(cache).lower()}")


def attach_with_retry(conn: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Proxies started at once on a new catalog race to create DuckLake's tables in it
    (the loser sees `duplicate key ... pg_type_typname_nsp_index`): wait, then attach
    the lake the winner created."""
    for attempt in range(5):
        try:
            conn.execute(sql)
            return
        except duckdb.Error as exc:
            if "Failed to initialize DuckLake" not in str(exc) or attempt == 4:
                raise
            log.info("DuckLake catalog being created by another proxy; attaching again")
            time.sleep(0.5 * (attempt + 1))


def compact_lake(
    conn: duckdb.DuckDBPyConnection, tables: list[str] | None = None
) -> list[tuple[str, int, int]]:
    """Merge each lake table's adjacent small Parquet files into files of up to the lake's
    target_file_size (DuckLake's ducklake_merge_adjacent_files), on `conn` with the lake
    attached (attach_lake). With data inlining off every INSERT writes a file of its own,
    and a scan opens every file: a table loaded by 200 INSERTs (TPC-H lineitem, sf 0.1)
    scanned 1.5-4x slower than after a merge (issue 25). Tables are 'name' or
    'schema.name' (public = main); none means all. Returns (table, files before, after).
    The merged-away files stay on disk for older snapshots until those are expired
    (ducklake_expire_snapshots, then ducklake_cleanup_old_files)."""
    known = conn.execute(
        "SELECT schema_name, table_name FROM system.main.duckdb_tables() WHERE database_name = ? ORDER BY ALL",
        [LAKE_DB],
    ).fetchall()
    wanted = known
    if tables:
        wanted = []
        for name in tables:
            schema, _, table = name.rpartition(".")
            schema = "main" if schema in ("", "public") else schema
            if (schema, table) not in known:
                raise LakeUnavailable(f"the lake has no table {name!r}")
            wanted.append((schema, table))
    done = []
    for schema, table in wanted:
        args = f"{lit(LAKE_DB)}, {lit(table)}, schema => {lit(schema)}"
        count = f"SELECT count(*) FROM ducklake_list_files({args})"
        before = conn.execute(count).fetchone()[0]
        conn.execute(f"CALL ducklake_merge_adjacent_files({args})")
        after = conn.execute(count).fetchone()[0]
        shown = "public" if schema == "main" else schema
        done.append((f"{shown}.{table}", before, after))
    return done


def detach_lake(conn: duckdb.DuckDBPyConnection, local: str) -> None:
    """Back to the local file as default, then DETACH: the local file's shutdown
    checkpoint must not run DuckLake maintenance on the shared catalog."""
    try:
        conn.execute(f'USE "{local}"')
        conn.execute(f"DETACH {LAKE_DB}")
    except duckdb.Error as exc:
        log.warning("detaching the DuckLake at shutdown: %s", exc)


# What DuckLake cannot store (tried with DuckLake 1.5.5's extension), and what to do
# instead; DuckDB says these as NotImplementedException (0A000 in duckdb_errors.py).
_LAKE_HINTS = (
    (
        "PRIMARY KEY/UNIQUE constraints are not supported in DuckLake",
        "a DuckLake keeps no PRIMARY KEY or UNIQUE constraint: declare the column NOT NULL "
        "without it, and keep keys unique in the application",
    ),
    (
        "CHECK constraints are not supported in DuckLake",
        "a DuckLake keeps no CHECK constraint, and hatiproxy keeps a varchar(n) length as "
        "one: declare the column text or varchar without a length",
    ),
    (
        "DuckLake does not support sequences",
        "a DuckLake has no sequences, so no serial, bigserial or GENERATED ... AS IDENTITY "
        "columns: give ids from the application (e.g. a uuid)",
    ),
    (
        "DuckLake does not support indexes",
        "a DuckLake has no indexes: queries scan (DuckLake prunes data files by their "
        "min/max statistics)",
    ),
    (
        "DuckLake does not support user-defined types",
        "a DuckLake has no CREATE TYPE: use the base type (an ENUM as text)",
    ),
    (
        "Failed to convert DuckDB type to DuckLake",
        "a DuckLake stores no fixed-size arrays (FLOAT[n], vector(n)): use a list "
        "(FLOAT[] / real[])",
    ),
)


def lake_hint(message: str) -> str | None:
    """The hint for an error DuckLake raised because it cannot store what was asked."""
    for words, hint in _LAKE_HINTS:
        if message.startswith(words) or words in message:
            return hint
    return None
