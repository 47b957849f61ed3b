"""The embedding cache's persistent table, kept in two generations so its bound is real.

Why generations: the bound used to be kept by deleting the oldest rows, but DuckDB only
marks deleted rows; their storage (and the buffer-pool memory holding it) is given back
only when a whole row group (122,880 rows) is deleted. So a table bounded to 5,000 rows
held exactly as much memory as an unbounded one (measured: 40 MiB of buffer pool and a
75 MiB file after 30,720 texts either way), and under bench/rss.py, where every stored
memory is a new text, the server's RSS rose with it. Dropping a table does give its
storage back. So rows go into the newest of at most two tables (`<TABLE>_g<n>`); once it
holds half the bound, a new generation starts and the oldest is dropped: the tables
hold at most the bound (plus one write batch), evicted by write time in halves.

`<TABLE>` itself is a view over the generations (operators and tests read it); lookups
go to each table's primary-key index directly, newest first. A table of the earlier
single-table layout becomes generation 0.

Not thread-safe: the caller (CachedEmbedder) serialises lookups against `rotate`.
"""

from __future__ import annotations

import re

import duckdb

_CREATE = (
    "CREATE TABLE {} (key VARCHAR PRIMARY KEY, model VARCHAR NOT NULL,"
    " mode VARCHAR NOT NULL, text_sha256 VARCHAR NOT NULL, vec FLOAT[] NOT NULL,"
    " created_at TIMESTAMP DEFAULT current_timestamp)"
)


class CacheTables:
    """The generation tables of one cache table name, oldest first."""

    def __init__(self, con: duckdb.DuckDBPyConnection, name: str) -> None:
        self.name = name
        self._gen = re.compile(re.escape(name) + r"_g(\d+)$")
        _convert_legacy(con, name)
        gens = sorted(
            (int(m.group(1)), t) for t in _tables(con, name + "_g") if (m := self._gen.match(t))
        )
        for _, old in gens[:-2]:  # a crash between creating one and dropping another
            con.execute(f"DROP TABLE {old}")
        self.tables = [t for _, t in gens[-2:]]
        self._next = gens[-1][0] + 1 if gens else 1
        if not self.tables:
            self._add(con)
        else:
            self._view(con)
        row = con.execute(f"SELECT count(*) FROM {self.tables[-1]}").fetchone()
        self.newest_rows = int(row[0]) if row else 0  # rows written into the newest

    @property
    def newest(self) -> str:
        return self.tables[-1]

    def keys(self, con: duckdb.DuckDBPyConnection) -> list[str]:
        return [k for t in self.tables for (k,) in con.execute(f"SELECT key FROM {t}").fetchall()]

    def rotate(self, con: duckdb.DuckDBPyConnection) -> int:
        """Start a new generation and drop the oldest beyond two; returns the rows dropped."""
        dropped = 0
        if len(self.tables) == 2:
            row = con.execute(f"SELECT count(*) FROM {self.tables[0]}").fetchone()
            dropped = int(row[0]) if row else 0
        con.begin()
        try:
            self._add(con)
            if len(self.tables) > 2:
                con.execute(f"DROP TABLE {self.tables.pop(0)}")
                self._view(con)
            con.commit()
        except BaseException:
            con.rollback()
            raise
        self.newest_rows = 0
        return dropped

    def _add(self, con: duckdb.DuckDBPyConnection) -> None:
        table = f"{self.name}_g{self._next}"
        con.execute(_CREATE.format(table))
        self._next += 1
        self.tables.append(table)
        self._view(con)

    def _view(self, con: duckdb.DuckDBPyConnection) -> None:
        union = " UNION ALL ".join(f"SELECT * FROM {t}" for t in reversed(self.tables))
        con.execute(f"CREATE OR REPLACE VIEW {self.name} AS {union}")


def _tables(con: duckdb.DuckDBPyConnection, prefix: str) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM system.main.duckdb_tables() WHERE schema_name = 'main'"
            " AND database_name = current_database() AND starts_with(table_name, ?)",
            [prefix],
        ).fetchall()
    ]


def _convert_legacy(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """A base table named `name` (the single-table layout) becomes generation 0; one of the
    layout before it (a three-column primary key, answered only by scans) is rebuilt."""
    if name not in _tables(con, name):
        return
    cols = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM system.main.duckdb_columns() WHERE table_name = ? "
            "AND schema_name = 'main' AND database_name = current_database()",
            [name],
        ).fetchall()
    }
    con.begin()
    try:
        if "key" in cols:
            con.execute(f"ALTER TABLE {name} RENAME TO {name}_g0")
        else:
            con.execute(_CREATE.format(f"{name}_g0"))
            con.execute(
                f"INSERT INTO {name}_g0 SELECT model || '|' || mode || '|' || text_sha256,"
                f" model, mode, text_sha256, vec, created_at FROM {name}"
            )
            con.execute(f"DROP TABLE {name}")
        con.commit()
    except BaseException:
        con.rollback()
        raise
