"""The agent layer's shared store with `lake_catalog` set: a second DuckLake in the same
PostgreSQL catalog database, with its own metadata schema and data path.

Where: `ATTACH 'ducklake:<lake_catalog>' AS agent_lake (METADATA_SCHEMA 'hatidata_agent',
DATA_PATH '<lake_data>/_hatidata_agent')` on the agent database's DuckDB instance only
(proxy/db/agent_db.py). The client-facing instance never attaches it, so no client
statement can name it, as with the local agent file.

What a DuckLake refuses (DuckLake 1.5.5): PRIMARY KEY / UNIQUE, indexes, sequences,
fixed-size arrays, and RETURNING on INSERT and UPDATE. So a shared table is not declared
a second time: `mirror_table` derives it from the local tables' own declarations (their
columns as DuckDB reports them), dropping what the lake cannot hold (keys, the local
`seq` counter) and storing `FLOAT[n]` as `FLOAT[]` (cast back to `FLOAT[n]` on read).
"""

from __future__ import annotations

import contextlib
import logging
import re
import uuid
from collections.abc import Iterator

import duckdb

from proxy.core.names import INTERNAL_SCHEMA
from proxy.db.conflicts import again_on_conflict
from proxy.db.lake import (
    LakeUnavailable,
    attach_with_retry,
    catalog_pool,
    lit,
    load_lake_extensions,
    redact,
)

log = logging.getLogger("hatiproxy.engine")

AGENT_LAKE = "agent_lake"  # its name inside the agent database's DuckDB instance
METADATA_SCHEMA = "hatidata_agent"  # its catalog tables' schema in the PostgreSQL database
# Those catalog tables as the agent database's instance names them (DuckLake attaches the
# catalog database under this name): the poller reads what each snapshot changed there.
METADATA = f"__ducklake_metadata_{AGENT_LAKE}.{METADATA_SCHEMA}"
_FIXED_ARRAY = re.compile(r"^(.*)\[\d+\]$")
# This process, as the author of the lake commits it signs (`sign`): its own poller
# skips them (what it wrote it holds already).
AUTHOR = f"hatiproxy-{uuid.uuid4().hex[:16]}"


def attach_agent_lake(conn: duckdb.DuckDBPyConnection, catalog: str, data_path: str) -> None:
    """ATTACH the agent lake to the agent database's instance (not as its default: the
    local agent tables keep their unqualified names)."""
    load_lake_extensions(conn)
    options = f"METADATA_SCHEMA {lit(METADATA_SCHEMA)}, DATA_INLINING_ROW_LIMIT 0"
    if data_path:
        options += f", DATA_PATH {lit(data_path.rstrip('/') + '/_hatidata_agent')}"
    try:
        with catalog_pool(conn):
            attach_with_retry(
                conn, f"ATTACH {lit('ducklake:' + catalog)} AS {AGENT_LAKE} ({options})"
            )
        create(conn, f"CREATE SCHEMA IF NOT EXISTS {AGENT_LAKE}.{INTERNAL_SCHEMA}")
    except duckdb.Error as exc:
        raise LakeUnavailable(
            f"cannot open the DuckLake catalog {redact(catalog)!r} for the agent layer's "
            f"store (metadata schema {METADATA_SCHEMA}): {redact(' '.join(str(exc).split()))}. "
            "Check --lake-catalog (e.g. 'postgres:dbname=lake host=db.internal user=hati') "
            "and that the PostgreSQL server accepts this proxy."
        ) from None
    log.info("agent layer's shared store: DuckLake %s (%s)", redact(catalog), METADATA_SCHEMA)


def detach_agent_lake(conn: duckdb.DuckDBPyConnection) -> None:
    try:
        conn.execute(f"DETACH {AGENT_LAKE}")
    except duckdb.Error as exc:
        log.warning("detaching the agent lake at shutdown: %s", exc)


def lake_table(local: str) -> str:
    """The shared table of a local `hatidata_internal.<name>`."""
    return f"{AGENT_LAKE}.{local}"


def _lake_type(data_type: str) -> str:
    found = _FIXED_ARRAY.match(data_type)
    return f"{found[1]}[]" if found else data_type


def mirror_table(
    cur: duckdb.DuckDBPyConnection, sources: list[tuple[str, tuple[str, ...]]]
) -> list[str]:
    """Create the shared table of local tables (schema.table, columns to leave out) from
    their own columns, as a DuckLake can hold them (idempotent): named after the first,
    with the columns of each in order, a name the tables share taken once (the key they
    join on). One lake row can so carry a memory and its vector: one change-feed read
    and one lake insert instead of two. Returns the shared table's columns."""
    kept: dict[str, tuple[str, bool]] = {}
    for local, skip in sources:
        schema, table = local.split(".")
        cols = cur.execute(
            "SELECT column_name, data_type, is_nullable FROM system.main.duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = ? "
            "AND table_name = ? ORDER BY column_index",
            [schema, table],
        ).fetchall()
        if not cols:
            raise RuntimeError(f"no local table {local} to share")
        for name, data_type, nullable in cols:
            if name not in skip:
                kept.setdefault(name, (_lake_type(data_type), nullable))
    ddl = ", ".join(f'"{n}" {t}' + ("" if null else " NOT NULL") for n, (t, null) in kept.items())
    create(cur, f"CREATE TABLE IF NOT EXISTS {lake_table(sources[0][0])} ({ddl})")
    return list(kept)


def create(cur: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Idempotent DDL in the agent lake: proxies starting at once run it together, and
    all but one lose at commit (TransactionException); run again, it then does nothing."""
    again_on_conflict(lambda: cur.execute(sql), attempts=3)


@contextlib.contextmanager
def lake_transaction(cur: duckdb.DuckDBPyConnection, *registered: str) -> Iterator[None]:
    """One transaction on `cur`: committed when the block ends, rolled back when it
    raises (the error goes on: a conflict's TransactionException reaches the caller's
    retry), and the Arrow tables `registered` on the cursor for it unregistered either way."""
    cur.begin()
    try:
        yield
        cur.commit()
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # a failed COMMIT ended it already
            cur.rollback()
        raise
    finally:
        for name in registered:
            with contextlib.suppress(duckdb.Error):  # registered only on some paths
                cur.unregister(name)


def sign(cur: duckdb.DuckDBPyConnection, what: str) -> None:
    """Mark the agent-lake commit of the transaction open on `cur` as this process's (the
    snapshot's author in the catalog): this proxy's poller does not wake its services
    for it. Only for a commit whose rows this proxy already holds locally."""
    cur.execute(f"CALL {AGENT_LAKE}.set_commit_message({lit(AUTHOR)}, {lit(what)})")


def current_snapshot(cur: duckdb.DuckDBPyConnection) -> int:
    """The agent lake's latest committed snapshot id."""
    return int(cur.execute(f"FROM {AGENT_LAKE}.current_snapshot()").fetchone()[0])


def changes_since(local: str, columns: str, last: int | None, snap: int) -> str:
    """SQL for the rows of the shared table of `local` changed after snapshot `last` up to
    `snap` (`change_type`: insert, delete, update_preimage, update_postimage; then
    `snapshot_id` and `columns`); with no `last` (a first catch-up), every row as of
    `snap`, as inserts."""
    if last is None:
        return (
            f"SELECT 'insert' AS change_type, {int(snap)} AS snapshot_id, {columns}"
            f" FROM {lake_table(local)} AT (VERSION => {int(snap)})"
        )
    schema, table = local.split(".")
    return (
        f"SELECT change_type, snapshot_id, {columns} FROM ducklake_table_changes("
        f"{lit(AGENT_LAKE)}, {lit(schema)}, {lit(table)}, {int(last) + 1}, {int(snap)})"
    )
