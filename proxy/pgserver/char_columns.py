"""A table's char(n) columns, which COPY treats as PostgreSQL does: COPY FROM stores a
value without its trailing blanks (as `=` and length() ignore them; a dump's come padded),
COPY TO pads it to n (what results do: results.encoders_for)."""

from __future__ import annotations

from dataclasses import replace

import duckdb
from sqlglot import exp

from proxy.core.names import PG_SCHEMA
from proxy.pgserver import alter_rebuild
from proxy.pgserver.results import Column


def char_columns(cur: duckdb.DuckDBPyConnection, table: str) -> dict[str, tuple[int, int]]:
    """Lower-case name -> (1042, typmod) of the char(n) columns of `table` (DuckDB SQL
    name); call it while the cursor holds no pending result."""
    found = alter_rebuild.resolve_table(cur, _table_name(table))
    if found is None:
        return {}
    rows = cur.execute(
        f"SELECT c.column_name, k.typid, k.typmod FROM {PG_SCHEMA}.__hati_char_cols k "
        "JOIN system.main.duckdb_columns() c ON c.table_oid = k.table_oid AND c.column_index = k.attnum "
        "WHERE k.table_oid = ? AND k.typid = 1042",
        [found.oid],
    ).fetchall()
    return {str(n).lower(): (int(t), int(m)) for n, t, m in rows}


def _table_name(sql: str) -> alter_rebuild.TableName:
    node = exp.to_table(sql, dialect="duckdb")
    return alter_rebuild.TableName(node.name, node.db or None, node.catalog or None)


def char_typed(cols: tuple[Column, ...], chars: dict[str, tuple[int, int]]) -> tuple[Column, ...]:
    """The columns of COPY table TO (named as the table's), its char(n) ones (`chars`:
    char_columns) typed bpchar."""
    return tuple(replace(c, declared=chars.get(c.name.lower(), c.declared)) for c in cols)
