"""VACUUM / ANALYZE of named relations, looked at one by one as PostgreSQL does.

DuckDB vacuums and analyzes base tables only, one a statement, and refuses the rest
("Can only vacuum or analyze base tables"). PostgreSQL takes a list, skips a view or a
sequence with a WARNING, and does its catalogs like any table: vacuumdb, for one, names
every table pg_class lists, pg_catalog's included. Here a relation missing is 42P01 and
a missing column 42703, before any work (PostgreSQL resolves the list first); the
emulated catalogs (views in DuckDB, tables in pg_class) have nothing to reclaim and are
passed over quietly; views, sequences, indexes and information_schema's views get
PostgreSQL's WARNING; tables and materialized views go to DuckDB under DuckDB's own
names (pg_class's `public` is DuckDB's `main`)."""

from __future__ import annotations

import duckdb

from proxy.db.catalog import snapshot as catalog_snapshot
from proxy.wire.errors import PgError

Targets = tuple[tuple[str, tuple[str, ...]], ...]

_LOOKUP = """SELECT c.oid, c.relkind, n.nspname, c.relname
FROM __hati_catalog.pg.pg_class c JOIN __hati_catalog.pg.pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = __hati_catalog.pg.to_regclass(?)"""
_DUCKDB_NAME = """SELECT database_name, schema_name, table_name FROM system.main.duckdb_tables()
WHERE table_oid = ?"""
_COLUMNS = """SELECT attname FROM __hati_catalog.pg.pg_attribute
WHERE attrelid = ? AND attnum > 0 AND NOT attisdropped"""
_TABLES = ("r", "m", "p")
_SYSTEM_SCHEMAS = ("pg_catalog",)  # pg_class calls them tables, DuckDB has them as views


def plan(cur: duckdb.DuckDBPyConnection, verb: str, targets: Targets) -> list[tuple[str, str]]:
    """("sql", DuckDB statement) or ("warning", text) for each relation of a VACUUM /
    ANALYZE (`verb`: "vacuum", "vacuum analyze", "analyze"), in order; raises PgError
    for a missing relation or column. Reads the catalog in `cur`'s open transaction."""
    catalog_snapshot.refresh(cur, _LOOKUP, autocommit=False)
    steps: list[tuple[str, str]] = []
    duck_verb = "ANALYZE" if verb == "analyze" else verb.upper()
    for relation, columns in targets:
        row = cur.execute(_LOOKUP, [relation]).fetchone()
        if row is None:
            raise PgError("42P01", f'relation "{relation.replace(chr(34), "")}" does not exist')
        oid, kind, schema, name = row
        if kind not in _TABLES:
            what = "analyze" if verb == "analyze" else "vacuum"
            text = f'skipping "{name}" --- cannot {what} non-tables or special system tables'
            steps.append(("warning", text))
            continue
        table = cur.execute(_DUCKDB_NAME, [oid]).fetchone()
        if schema in _SYSTEM_SCHEMAS or table is None:
            continue
        have = {r[0] for r in cur.execute(_COLUMNS, [oid]).fetchall()}
        for column in columns:
            if column not in have:
                raise PgError("42703", f'column "{column}" of relation "{name}" does not exist')
        listed = f" ({', '.join(map(_quoted, columns))})" if columns else ""
        steps.append(("sql", f"{duck_verb} {'.'.join(map(_quoted, table))}{listed}"))
    return steps


def tag(verb: str) -> str:
    return "ANALYZE" if verb == "analyze" else "VACUUM"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
