"""Give a DuckDB table's deleted rows back: measure them, and rewrite the table without them.

Why: DuckDB keeps a deleted row's storage, in the file and in the buffer pool, until its
whole row group (122,880 rows) is deleted; CHECKPOINT, FORCE CHECKPOINT and VACUUM do not
reclaim it (checked with DuckDB 1.5.5: 10,000 memory-shaped rows stored and deleted on a
1,000-row table keep 57 of the file's blocks used and 15 MB of buffer pool, through all
three). Copying the live rows into a new table and dropping the old one gives it back.

The rewrite copies only what a concurrent writer has committed before it, and a write
committed after its copy is lost with the old table: the caller must hold off every
writer of the table for the transaction's duration (proxy/agent/compaction.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import duckdb

_OLD_SUFFIX = "__hati_compacting"


class TableRows(NamedTuple):
    live: int
    deleted: int  # rows deleted whose storage the table still holds


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_rows(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> TableRows | None:
    """Live and deleted-but-stored rows of a table of the default database; None when it is
    missing or not in a DuckDB file or in-memory database (a DuckLake compacts its own)."""
    row = cur.execute(
        "SELECT t.estimated_size FROM system.main.duckdb_tables() t JOIN duckdb_databases() d"
        " USING (database_name) WHERE t.database_name = current_database()"
        " AND t.schema_name = ? AND t.table_name = ? AND d.type = 'duckdb'",
        [schema, table],
    ).fetchone()
    if row is None:
        return None
    # estimated_size counts every row stored, deleted ones too, until their row group goes.
    live = cur.execute(f"SELECT count(*) FROM {_quote(schema)}.{_quote(table)}").fetchone()
    n = int(live[0]) if live else 0
    return TableRows(n, max(int(row[0]) - n, 0))


def rewrite_table(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> int:
    """Inside the caller's transaction: the table again, holding only its live rows, with
    its definition (columns, constraints, defaults), comments and indexes. The rows copied.

    The table keeps its name, so views and sequences over it go on working; rows keep their
    values (seq columns included). Foreign keys to or from it make DuckDB refuse the
    rename (an error: the caller's transaction rolls back, nothing changed)."""
    q = f"{_quote(schema)}.{_quote(table)}"
    found = cur.execute(
        "SELECT sql, comment FROM system.main.duckdb_tables() WHERE database_name = current_database()"
        " AND schema_name = ? AND table_name = ?",
        [schema, table],
    ).fetchone()
    if found is None:
        raise LookupError(f"{schema}.{table}: no such table")
    ddl, comment = found
    columns = cur.execute(
        "SELECT column_name, comment FROM system.main.duckdb_columns() WHERE database_name ="
        " current_database() AND schema_name = ? AND table_name = ? ORDER BY column_index",
        [schema, table],
    ).fetchall()
    indexes = cur.execute(
        "SELECT index_name, sql FROM system.main.duckdb_indexes() WHERE database_name = current_database()"
        " AND schema_name = ? AND table_name = ?",
        [schema, table],
    ).fetchall()
    for name, _ in indexes:  # an index is a dependent: DuckDB refuses to rename under it
        cur.execute(f"DROP INDEX {_quote(schema)}.{_quote(name)}")
    old = table + _OLD_SUFFIX
    cur.execute(f"ALTER TABLE {q} RENAME TO {_quote(old)}")
    cur.execute(ddl)  # system.main.duckdb_tables().sql names the table with its schema
    cols = ", ".join(_quote(c) for c, _ in columns)
    cur.execute(f"INSERT INTO {q} ({cols}) SELECT {cols} FROM {_quote(schema)}.{_quote(old)}")
    copied = cur.execute(f"SELECT count(*) FROM {q}").fetchone()
    cur.execute(f"DROP TABLE {_quote(schema)}.{_quote(old)}")
    for _, sql in indexes:
        if sql:
            cur.execute(sql)
    if comment:
        cur.execute(f"COMMENT ON TABLE {q} IS {_literal(comment)}")
    for c, text in columns:
        if text:
            cur.execute(f"COMMENT ON COLUMN {q}.{_quote(c)} IS {_literal(text)}")
    return int(copied[0]) if copied else 0
