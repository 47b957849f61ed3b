"""Branch tables: catalog reads and copying main's tables (copy-on-write, merge create).

Everything here runs on a worker thread with a DuckDB cursor.
"""

from __future__ import annotations

import re

import duckdb

_TMP_PREFIX = "__hati_cow_"  # scratch name while a copy is built (see _materialize)


def _q(name: str) -> str:
    """Quote an identifier for DuckDB."""
    return '"' + name.replace('"', '""') + '"'


def _base_tables(cur: duckdb.DuckDBPyConnection, schema: str) -> dict[str, str]:
    """lower(name) -> name of the base tables of `schema` in the current database."""
    rows = cur.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? "
        "AND database_name = system.main.current_database() AND NOT temporary",
        [schema],
    ).fetchall()
    return {name.lower(): name for (name,) in rows}


def _branchable(cur: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """main's base tables a branch mirrors (never the agent layer's own tables)."""
    return {
        low: name
        for low, name in _base_tables(cur, "main").items()
        if not low.startswith("_hatidata")
    }


def _table_sql(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> str | None:
    row = cur.execute(
        "SELECT sql FROM duckdb_tables() WHERE schema_name = ? AND table_name = ? "
        "AND database_name = system.main.current_database()",
        [schema, table],
    ).fetchone()
    return row[0] if row else None


def _constraints(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[tuple]:
    return cur.execute(
        "SELECT constraint_type, constraint_column_names FROM duckdb_constraints() "
        "WHERE schema_name = ? AND table_name = ? AND database_name = system.main.current_database()",
        [schema, table],
    ).fetchall()


def _primary_key(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[str]:
    for kind, cols in _constraints(cur, schema, table):
        if kind == "PRIMARY KEY":
            return list(cols)
    return []


def _columns(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[str]:
    rows = cur.execute(
        "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
        "AND database_name = system.main.current_database() ORDER BY column_index",
        [schema, table],
    ).fetchall()
    return [name for (name,) in rows]


_IDENT = re.compile(r'"(?:[^"]|"")*"|[^".(\s]+')


def _retarget(ddl: str, schema: str, table: str) -> str | None:
    """DuckDB's `CREATE TABLE [s.]t(...)` text re-targeted to `"schema"."table"`; None if the
    text does not have the expected shape (the caller then falls back to CREATE TABLE AS)."""
    head = "CREATE TABLE "
    if not ddl.startswith(head):
        return None
    pos = len(head)
    while True:  # skip the (possibly qualified, possibly quoted) name
        match = _IDENT.match(ddl, pos)
        if match is None:
            return None
        pos = match.end()
        if ddl.startswith(".", pos):
            pos += 1
            continue
        break
    if not ddl.startswith("(", pos):
        return None
    return f"{head}{_q(schema)}.{_q(table)}{ddl[pos:]}"


def _copy_table(
    cur: duckdb.DuckDBPyConnection, src_schema: str, src: str, dst_schema: str, dst: str
) -> str:
    """Create dst_schema.dst with src's structure and rows; returns what was kept."""
    ddl = _table_sql(cur, src_schema, src) or ""
    constraints = _constraints(cur, src_schema, src)
    has_fk = any(kind == "FOREIGN KEY" for kind, _ in constraints)
    target = f"{_q(dst_schema)}.{_q(dst)}"
    create = None if has_fk else _retarget(ddl, dst_schema, dst)
    if create is not None:
        cur.execute(create)
        kept = "all constraints"
    else:
        # DuckDB cannot create foreign keys across schemas: keep types and the primary key.
        cur.execute(f"CREATE TABLE {target} AS SELECT * FROM {_q(src_schema)}.{_q(src)} LIMIT 0")
        pk = _primary_key(cur, src_schema, src)
        if pk:
            cols = ", ".join(_q(c) for c in pk)
            cur.execute(f"ALTER TABLE {target} ADD PRIMARY KEY ({cols})")
        kept = "primary key only (foreign keys not copied)" if pk else "no constraints"
    cur.execute(f"INSERT INTO {target} SELECT * FROM {_q(src_schema)}.{_q(src)}")
    return kept


def _materialize(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> str:
    """Replace branch view `schema.table` by a real copy of main.table.

    Built under a scratch name and renamed at the end, so that on a cursor in autocommit
    mode a failure part-way never leaves the branch without its view.
    """
    tmp = _TMP_PREFIX + table
    qs = _q(schema)
    cur.execute(f"DROP TABLE IF EXISTS {qs}.{_q(tmp)}")
    kept = _copy_table(cur, "main", table, schema, tmp)
    cur.execute(f"DROP VIEW IF EXISTS {qs}.{_q(table)}")
    cur.execute(f"ALTER TABLE {qs}.{_q(tmp)} RENAME TO {_q(table)}")
    return kept
