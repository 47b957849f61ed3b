"""Upgrade: move agent data a previous version kept in the users' database to the agent's.

Before the agent layer had a database of its own (proxy/db/agent_db.py), its tables
lived in the schema `hatidata_internal` of the users' file, with identity-filtered
views `main._hatidata_*` over them and the embedding cache in
`main._hatidata_embedding_cache`. At start, every such table is recreated in the agent
database with its own DDL (constraints, defaults), its sequences continue after their
last value, and every row is copied (streamed as Arrow from the users' instance).
Crash safety: the copy and a marker row commit in ONE agent transaction; only then are
the old schema, views and cache dropped from the users' file. A crash before that
commit leaves the old data as it was (the next start copies again); a crash after it
finds the marker and only drops what is left.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import time
from collections.abc import Iterator

import duckdb

from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.sqltext import quote_ident

log = logging.getLogger("hatiproxy.engine")

CACHE_TABLE = "_hatidata_embedding_cache"
MARKER = f"{INTERNAL_SCHEMA}.moved_from_users_db"
_BATCH_ROWS = 100_000


def _old_tables(users: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    return users.execute(
        "SELECT schema_name, table_name, sql FROM system.main.duckdb_tables() "
        "WHERE database_name = current_database() AND NOT internal AND "
        "(schema_name = ? OR (schema_name = 'main' AND table_name = ?)) ORDER BY table_oid",
        [INTERNAL_SCHEMA, CACHE_TABLE],
    ).fetchall()


def _old_views(users: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        r[0]
        for r in users.execute(
            "SELECT view_name FROM system.main.duckdb_views() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND NOT internal "
            "AND starts_with(view_name, '_hatidata_')"
        ).fetchall()
    ]


@contextlib.contextmanager
def _transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor in a transaction of its own: committed when the block ends, rolled back
    if it raises."""
    cur = conn.cursor()
    try:
        cur.begin()
        yield cur
        cur.commit()
    except BaseException:
        cur.rollback()
        raise
    finally:
        cur.close()


def _any(conn: duckdb.DuckDBPyConnection, catalog: str, where: str = "") -> bool:
    """Whether `catalog` (a duckdb_* table function) has a row for the internal schema
    in the connection's own database."""
    row = conn.execute(
        f"SELECT count(*) FROM {catalog}() WHERE database_name = current_database() "
        f"AND schema_name = ? {where}",
        [INTERNAL_SCHEMA],
    ).fetchone()
    return bool(row and row[0])


def _has_old_schema(users: duckdb.DuckDBPyConnection) -> bool:
    return _any(users, "duckdb_schemas")


def _moved_before(agent: duckdb.DuckDBPyConnection) -> bool:
    return _any(agent, "duckdb_tables", "AND table_name = 'moved_from_users_db'")


def move_agent_data(users: duckdb.DuckDBPyConnection, agent: duckdb.DuckDBPyConnection) -> None:
    """Move what a previous version left in the users' database (nothing to do: no cost
    beyond three catalog reads)."""
    tables = _old_tables(users)
    views = _old_views(users)
    if not (tables or views or _has_old_schema(users)):
        return
    if _moved_before(agent):
        log.warning("agent data was moved before; removing what is left in the users' database")
    else:
        _copy(users, agent, tables)
    _drop_old(users, views, any(s == "main" for s, _, _ in tables))


def _copy(
    users: duckdb.DuckDBPyConnection,
    agent: duckdb.DuckDBPyConnection,
    tables: list[tuple[str, str, str]],
) -> None:
    started = time.monotonic()
    sequences = users.execute(
        "SELECT sequence_name, start_value, increment_by, min_value, max_value, cycle, "
        "last_value FROM system.main.duckdb_sequences() WHERE database_name = current_database() "
        "AND schema_name = ?",
        [INTERNAL_SCHEMA],
    ).fetchall()
    indexes = users.execute(
        "SELECT sql FROM system.main.duckdb_indexes() WHERE database_name = current_database() "
        "AND schema_name = ? AND sql IS NOT NULL",
        [INTERNAL_SCHEMA],
    ).fetchall()
    moved: dict[str, int] = {}
    with _transaction(agent) as cur:
        cur.execute(f"CREATE SCHEMA IF NOT EXISTS {INTERNAL_SCHEMA}")
        for name, start, inc, low, high, cycle, last in sequences:
            nxt = start if last is None else last + inc  # continue after its last value
            cur.execute(
                f"CREATE SEQUENCE IF NOT EXISTS {INTERNAL_SCHEMA}.{quote_ident(name)} "
                f"START WITH {nxt} INCREMENT BY {inc} MINVALUE {low} MAXVALUE {high}"
                + (" CYCLE" if cycle else "")
            )
        for schema, table, ddl in tables:
            cur.execute(ddl.replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1))
            target = f"{quote_ident(schema)}.{quote_ident(table)}"
            reader = users.cursor().execute(f"SELECT * FROM {target}")
            cur.register("__hati_moving", reader.to_arrow_reader(_BATCH_ROWS))
            try:
                cur.execute(f"INSERT INTO {target} BY NAME SELECT * FROM __hati_moving")
            finally:
                cur.unregister("__hati_moving")
            (count,) = cur.execute(f"SELECT count(*) FROM {target}").fetchone()
            moved[f"{schema}.{table}"] = int(count)
        for (sql,) in indexes:
            cur.execute(sql.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ", 1))
        cur.execute(f"CREATE TABLE {MARKER} (moved_at TIMESTAMPTZ NOT NULL, tables JSON)")
        cur.execute(
            f"INSERT INTO {MARKER} VALUES (?, ?)", [dt.datetime.now(dt.UTC), json.dumps(moved)]
        )
    agent.execute("CHECKPOINT")
    for table, count in moved.items():
        log.info("moved %s (%d rows) to the agent database", table, count)
    log.warning(
        "moved %d agent tables (%d rows) out of the users' database in %.1f s",
        len(moved),
        sum(moved.values()),
        time.monotonic() - started,
    )


def _drop_old(users: duckdb.DuckDBPyConnection, views: list[str], cache: bool) -> None:
    with _transaction(users) as cur:
        for view in views:
            cur.execute(f"DROP VIEW IF EXISTS main.{quote_ident(view)}")
        if cache:
            cur.execute(f"DROP TABLE IF EXISTS main.{CACHE_TABLE}")
        cur.execute(f"DROP SCHEMA IF EXISTS {INTERNAL_SCHEMA} CASCADE")
    users.execute("CHECKPOINT")
    log.warning(
        "removed the old agent schema %s, %d views and the embedding cache from the users' "
        "database",
        INTERNAL_SCHEMA,
        len(views),
    )
