"""Branch tables: catalog reads and copying main's tables (copy-on-write, merge create).

What a copy keeps: everything main's table declares. Column types, collations, DEFAULT
expressions, generated columns, NOT NULL, CHECK, PRIMARY KEY, UNIQUE come from DuckDB's DDL
text re-targeted to the branch (branch_ddl); FOREIGN KEYs are rebuilt from DuckDB's catalog to
point at the branch's copy of the referenced table. DuckDB cannot create a foreign key to
another schema, and a referenced row must be checked against the branch's own rows, so a write
to any table linked by foreign keys (either way, at any distance) copies that whole group of
tables, referenced tables first (branch_fk): inserting a dangling reference (23503), deleting
a referenced row (23503), duplicates (23505), NULLs (23502) and CHECKs (23514) fail in the
branch exactly as in main. Indexes are copied too (a UNIQUE index enforces like a constraint).
Sequence defaults keep drawing from main's sequence (branch_seq). Comments are not copied.

Everything here runs on a worker thread with a DuckDB cursor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import duckdb

from proxy.agent.branches.ddl import index_sql, table_ddl
from proxy.agent.branches.fk import component, fill, foreign_keys, self_keys, topo_order
from proxy.core.sqltext import quote_ident

T = TypeVar("T")
# Scratch name of a copy being built by earlier versions (build + rename); leftovers of an
# interrupted copy are still skipped by merge, diff and storage. Copies are now built under
# their final name: DuckDB loses track of a foreign key when its table is renamed.
TMP_PREFIX = "__hati_cow_"


def base_tables(cur: duckdb.DuckDBPyConnection, schema: str) -> dict[str, str]:
    """lower(name) -> name of the base tables of `schema` in the current database."""
    rows = cur.execute(
        "SELECT table_name FROM system.main.duckdb_tables() WHERE schema_name = ? "
        "AND database_name = system.main.current_database() AND NOT temporary",
        [schema],
    ).fetchall()
    return {name.lower(): name for (name,) in rows}


def branchable(cur: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """main's base tables a branch mirrors (never the agent layer's own tables, nor the
    server's `__hati*` ones such as its constraint registry)."""
    return {
        low: name
        for low, name in base_tables(cur, "main").items()
        if not low.startswith(("_hatidata", "__hati"))
    }


def _constraints(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[tuple]:
    return cur.execute(
        "SELECT constraint_type, constraint_column_names FROM system.main.duckdb_constraints() "
        "WHERE schema_name = ? AND table_name = ? AND database_name = system.main.current_database()",
        [schema, table],
    ).fetchall()


def primary_key_columns(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[str]:
    for kind, cols in _constraints(cur, schema, table):
        if kind == "PRIMARY KEY":
            return list(cols)
    return []


def column_names(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[str]:
    rows = cur.execute(
        "SELECT column_name FROM system.main.duckdb_columns() WHERE schema_name = ? AND table_name = ? "
        "AND database_name = system.main.current_database() ORDER BY column_index",
        [schema, table],
    ).fetchall()
    return [name for (name,) in rows]


def insertable(
    cur: duckdb.DuckDBPyConnection, schema: str, table: str, generated: set[str]
) -> list[str]:
    return [c for c in column_names(cur, schema, table) if c.lower() not in generated]


def _in_transaction(cur: duckdb.DuckDBPyConnection) -> bool:
    # DuckDB gives each autocommit statement its own transaction id; BEGIN cannot be probed
    # (a second BEGIN aborts the open transaction).
    a = cur.execute("SELECT txid_current()").fetchone()[0]
    return a == cur.execute("SELECT txid_current()").fetchone()[0]


def atomic(cur: duckdb.DuckDBPyConnection, fn: Callable[[], T]) -> T:
    """fn() inside the cursor's transaction, or in one of its own (a wire session in
    autocommit mode): a copy never ends half-made, with the branch's view already gone."""
    return fn() if _in_transaction(cur) else transaction(cur, fn)


def transaction(cur: duckdb.DuckDBPyConnection, fn: Callable[[], T]) -> T:
    """fn() in a transaction of its own on `cur` (which must not be in one)."""
    cur.begin()
    try:
        out = fn()
    except BaseException:
        cur.rollback()
        raise
    cur.commit()
    return out


def copy_table(
    cur: duckdb.DuckDBPyConnection,
    src_schema: str,
    src: str,
    dst_schema: str,
    dst: str,
    *,
    move_sequences: bool = False,
) -> str:
    """Create dst_schema.dst with src's structure and rows; returns what was kept."""
    target = f"{quote_ident(dst_schema)}.{quote_ident(dst)}"
    source = f"{quote_ident(src_schema)}.{quote_ident(src)}"
    ddl = table_ddl(cur, src_schema, src, dst_schema, dst, move_sequences=move_sequences)
    if ddl is None:  # not DuckDB's usual text: keep the column types and the primary key
        cur.execute(f"CREATE TABLE {target} AS SELECT * FROM {source} LIMIT 0")
        pk = primary_key_columns(cur, src_schema, src)
        if pk:
            cur.execute(
                f"ALTER TABLE {target} ADD PRIMARY KEY ({', '.join(quote_ident(c) for c in pk)})"
            )
        cur.execute(f"INSERT INTO {target} SELECT * FROM {source}")
        return "column types and primary key only (DDL not understood)"
    cur.execute(ddl.sql)
    cols = insertable(cur, src_schema, src, ddl.generated)
    own_fks = self_keys(foreign_keys(cur, dst_schema), dst)
    fill(
        cur,
        target,
        cols,
        f"SELECT {', '.join(quote_ident(c) for c in cols)} FROM {source}",
        own_fks,
    )
    for sql in index_sql(cur, src_schema, src, dst_schema, dst):  # after the rows: faster
        cur.execute(sql)
    if ddl.unenforced:
        return "all constraints but foreign keys " + "; ".join(ddl.unenforced)
    return "all constraints"


def copy_group(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[tuple[str, str]]:
    """Replace the branch's view of main.table by a real copy, together with every table of
    main linked to it by foreign keys that is still a view in the branch (referenced tables
    first). Returns (table, kept) per copy; [] when all are copies already. Call it inside a
    transaction (see atomic)."""
    main_tables = branchable(cur)
    mine = base_tables(cur, schema)
    fks = [
        fk for fk in foreign_keys(cur, "main")
        if fk.child in main_tables and fk.parent in main_tables
    ]  # fmt: skip
    group = component(fks, table)
    out = []
    for low in topo_order(group, fks):
        if low in mine or low not in main_tables:
            continue
        name = main_tables[low]
        cur.execute(f"DROP VIEW IF EXISTS {quote_ident(schema)}.{quote_ident(name)}")
        out.append((name, copy_table(cur, "main", name, schema, name)))
    return out
