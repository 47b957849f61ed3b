"""The catalog columns that are `"char"` in PostgreSQL 15, typed so here too.

DuckDB has no one-byte character type: these columns hold the ENUM of
proxy/wire/char_type.py (`pg.__hati_char`), which DuckDB carries through aliases,
subqueries and joins and the wire layer describes as "char" (OID 18), as drivers expect
(asyncpg compares pg_type.typtype with bytes). A catalog table's column changes type; a
catalog view is wrapped (install.py's `_add_tableoid`) with a cast of these columns.
"""

from __future__ import annotations

import duckdb

from proxy.core.names import PG_SCHEMA
from proxy.wire.char_type import PG_CHAR_ENUM

CHAR_TYPE = f"{PG_SCHEMA}.__hati_char"

# catalog -> its "char" columns (PostgreSQL 15's pg_attribute, atttypid 18; "char"[] too).
CHAR_COLUMNS: dict[str, tuple[str, ...]] = {
    "pg_type": ("typtype", "typcategory", "typdelim", "typalign", "typstorage"),
    "pg_class": ("relkind", "relpersistence", "relreplident"),
    "pg_attribute": ("attalign", "attstorage", "attcompression", "attidentity", "attgenerated"),
    "pg_proc": ("prokind", "provolatile", "proparallel"),
    "pg_constraint": ("contype", "confupdtype", "confdeltype", "confmatchtype"),
    "pg_depend": ("deptype",),
    "pg_shdepend": ("deptype",),
    "pg_default_acl": ("defaclobjtype",),
    "pg_trigger": ("tgenabled",),
    "pg_rewrite": ("ev_type", "ev_enabled"),
    "pg_cast": ("castcontext", "castmethod"),
    "pg_operator": ("oprkind",),
    "pg_amop": ("amoppurpose",),
    "pg_aggregate": ("aggkind",),
    "pg_database": ("datlocprovider",),
    "pg_collation": ("collprovider",),
    "pg_event_trigger": ("evtenabled",),
    "pg_policy": ("polcmd",),
    "pg_am": ("amtype",),
    "pg_init_privs": ("privtype",),
    "pg_partitioned_table": ("partstrat",),
    "pg_subscription": ("subtwophasestate",),
    "pg_statistic_ext": ("stxkind",),
}


def create_type(conn: duckdb.DuckDBPyConnection) -> None:
    """The "char" ENUM, in the catalog's schema (before the relations that use it)."""
    exists = conn.execute(
        "SELECT count(*) FROM system.main.duckdb_types() WHERE database_name = ? AND schema_name = ? "
        "AND type_name = '__hati_char'",
        PG_SCHEMA.split("."),
    ).fetchone()[0]
    if not exists:
        conn.execute(f"CREATE TYPE {CHAR_TYPE} AS {PG_CHAR_ENUM}")


def column_types(conn: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """catalog relation -> {column: DuckDB type} of every relation of the catalog schema
    that has "char" columns, in one catalog read (a DESCRIBE per view bound each view
    again: a tenth of a second for pg_attribute, most of `_add_tableoid`'s time)."""
    db, schema = PG_SCHEMA.split(".")
    rows = conn.execute(
        "SELECT table_name, column_name, data_type FROM system.main.duckdb_columns() "
        "WHERE database_name = ? AND schema_name = ? AND list_contains(?, table_name)",
        [db, schema, list(CHAR_COLUMNS)],
    ).fetchall()
    out: dict[str, dict[str, str]] = {}
    for table, column, duck_type in rows:
        out.setdefault(table, {})[column] = duck_type
    return out


def _columns(types: dict[str, dict[str, str]], name: str) -> list[tuple[str, str]]:
    """(column, "char" type to cast to) of catalog `name`'s "char" columns that exist;
    `types` is `column_types`'s answer."""
    have = types.get(name, {})
    out = []
    for column in CHAR_COLUMNS.get(name, ()):
        duck_type = have.get(column)
        if duck_type is not None:
            out.append((column, CHAR_TYPE + "[]" if duck_type.endswith("[]") else CHAR_TYPE))
    return out


def replace_clause(types: dict[str, dict[str, str]], name: str) -> str:
    """` REPLACE (CAST(c AS "char") AS c, ...)` for a view's wrapper, or ''."""
    casts = [f'CAST("{c}" AS {t}) AS "{c}"' for c, t in _columns(types, name)]
    return f" REPLACE ({', '.join(casts)})" if casts else ""


def alter_table(
    conn: duckdb.DuckDBPyConnection, types: dict[str, dict[str, str]], name: str
) -> None:
    """A catalog table's "char" columns change type (their values are single characters)."""
    for column, char_type in _columns(types, name):
        conn.execute(f'ALTER TABLE {PG_SCHEMA}.{name} ALTER COLUMN "{column}" TYPE {char_type}')
