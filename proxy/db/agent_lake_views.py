"""Agent tables that live in the agent lake, read under their local names.

A service whose rows are one store for every proxy (the ledger, the triggers) keeps its
table declarations as they are and, with `lake_catalog` set, calls `share(cur, tables)`
after them: each local table `hatidata_internal.<t>` gets its lake table (derived by
`agent_lake.mirror_table`: no keys, `FLOAT[n]` as `FLOAT[]`) and is replaced by a local
VIEW of the same name over it (casting lists back to `FLOAT[n]`). So every read of the
service (its SQL relations too) is unchanged and reads the lake; writes name
`target(t)`, the lake table (a DuckDB view takes no INSERT), and must do without
RETURNING (DuckLake refuses it). A transaction may write one database only: a shared
service's transaction writes lake tables only.

Rows a local table held before the lake was enabled are kept, renamed
`<t>_before_lake` (not moved: they would fork the shared chains). Started again without
the lake, `unshare` drops the views, so the service's declarations create local tables.

Which tables are shared is process-wide (one agent layer per server process).
"""

from __future__ import annotations

import contextlib
import logging
import time

import duckdb

from proxy.db.agent_lake import AGENT_LAKE, lake_table, mirror_table
from proxy.db.conflicts import again_on_conflict
from proxy.db.lake import lit

log = logging.getLogger("hatiproxy.engine")

_SHARED: set[str] = set()  # local names whose rows live in the agent lake


def target(table: str) -> str:
    """Where a write to `table` (schema.name) goes: its lake table when shared."""
    return lake_table(table) if table in _SHARED else table


def is_shared(table: str) -> bool:
    return table in _SHARED


def _views(cur: duckdb.DuckDBPyConnection, tables: list[str]) -> set[str]:
    rows = cur.execute(
        "SELECT schema_name || '.' || view_name FROM system.main.duckdb_views() "
        "WHERE database_name = current_database() AND NOT internal"
    ).fetchall()
    return {r[0] for r in rows} & set(tables)


def unshare(cur: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    """Before a service's declarations: drop the views a lake run left (so local tables
    are created or found again) and forget that the tables were shared."""
    for t in _views(cur, tables):
        cur.execute(f"DROP VIEW {t}")
    _SHARED.difference_update(tables)


def share(cur: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    """After a service's declarations (with `unshare` before them): put each table's rows
    in the agent lake and read them through a local view (see the module's doc)."""
    local = {t: _columns(cur, "current_database()", t) for t in tables}
    missing = [t for t in tables if not _columns(cur, lit(AGENT_LAKE), t)]
    if missing:
        # One lake transaction for all (each commit is catalog round trips); proxies
        # starting at once race to create them: the losers run it again, then find them.
        def create() -> None:
            cur.begin()
            try:
                for t in missing:
                    mirror_table(cur, [(t, ())])
                cur.commit()
            except duckdb.TransactionException:
                with contextlib.suppress(duckdb.Error):  # a failed COMMIT ended it already
                    cur.rollback()
                raise

        again_on_conflict(create, attempts=5)
    for t, cols in local.items():
        schema, name = t.split(".")
        if cur.execute(f"SELECT EXISTS (FROM {t})").fetchone()[0]:
            kept = f"{name}_before_lake"
            if _columns(cur, "current_database()", f"{schema}.{kept}"):
                kept += f"_{int(time.time())}"  # an earlier one is kept too
            cur.execute(f"ALTER TABLE {t} RENAME TO {kept}")
            log.warning("%s: rows from before the lake kept in %s.%s (not shared)", t, schema, kept)
        else:
            cur.execute(f"DROP TABLE {t}")
        select = ", ".join(
            f'"{c}"::{ty} AS "{c}"' if ty.endswith("]") else f'"{c}"' for c, ty in cols
        )
        cur.execute(f"CREATE VIEW {t} AS SELECT {select} FROM {lake_table(t)}")
        _SHARED.add(t)


def _columns(cur: duckdb.DuckDBPyConnection, database: str, table: str) -> list[tuple]:
    schema, name = table.split(".")
    return cur.execute(
        "SELECT column_name, data_type FROM system.main.duckdb_columns() "
        f"WHERE database_name = {database} AND schema_name = ? AND table_name = ? "
        "ORDER BY column_index",
        [schema, name],
    ).fetchall()
