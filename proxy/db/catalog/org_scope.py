"""What an API key's connection lists in every catalog: its organisation's objects and the
server's, never another organisation's (as PostgreSQL's information_schema shows only
objects one holds a privilege on).

Where the filter lives: DuckDB's own catalog table functions. Every catalog hatiproxy
shows -- pg_class, pg_attribute, pg_constraint, pg_index, pg_views, pg_proc, pg_sequences,
pg_stat_*_tables, pg_description, information_schema (ours and DuckDB's), SHOW TABLES,
SHOW ALL TABLES, sqlite_master, the snapshot tables of snapshot.py -- is computed from
duckdb_tables(), duckdb_views(), duckdb_columns(), ... called unqualified, and DuckDB binds
an unqualified table function to a TEMP macro of that name first (checked on DuckDB
1.5.5, also inside views, macros and pragma expansions such as SHOW TABLES). So a key's
connection gets, once at login, temp table macros of those names that read the real
function (`system.main.duckdb_tables()`) less what another organisation's keys own
(`__hati_owners.owner_org`, mirrored by proxy/access/ownership.py). The filter therefore
holds however the catalog is reached: views over views, macros, CTEs, prepared
statements, cursors, COPY (SELECT ...) TO STDOUT.

Why temp macros rather than a connection variable read by the views: temp objects are per
DuckDB connection and the key's organisation is written into the macro's text, so nothing
a statement sets (SET VARIABLE) or any other session does changes it, and no Python UDF
runs (UDFs may run on DuckDB's worker threads). What a key must not do -- name the real
functions (`system.main.duckdb_tables()`), or create / drop objects named like them --
proxy/access/sql_policy.py and system_objects.py refuse. Superusers get no macros: they
see everything at no cost.
"""

from __future__ import annotations

import duckdb

# function -> (owner record class, the column with the object's name, the schema column).
# Columns, constraints and indexes are judged by their table.
SHADOWED: dict[str, tuple[str, str, str]] = {
    "duckdb_tables": ("relation", "table_name", "schema_name"),
    "duckdb_views": ("relation", "view_name", "schema_name"),
    "duckdb_columns": ("relation", "table_name", "schema_name"),
    "duckdb_constraints": ("relation", "table_name", "schema_name"),
    "duckdb_indexes": ("relation", "table_name", "schema_name"),
    "duckdb_sequences": ("sequence", "sequence_name", "schema_name"),
    "duckdb_functions": ("function", "function_name", "schema_name"),
    "duckdb_types": ("type", "type_name", "schema_name"),
    "duckdb_schemas": ("schema", "schema_name", ""),
}
SHADOWED_NAMES = frozenset(SHADOWED)
OWNERS = "__hati_catalog.pg.__hati_owners"


def _lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def macro_sql(function: str, org: str, duck_db: str) -> str:
    """The temp macro that shows `function`'s rows less other organisations' objects."""
    cls, name_col, schema_col = SHADOWED[function]
    if schema_col:
        # owner records name public (DuckDB's main) and a branch's schema (branch_*, views
        # over main's tables) as public; other schemas as they are
        nsp = (
            f"CASE WHEN x.{schema_col} = 'main' OR starts_with(x.{schema_col}, 'branch_') "
            f"THEN 'public' ELSE x.{schema_col} END"
        )
    else:
        nsp = "''"
    # an ANTI JOIN on the (small) set of other organisations' objects: a hash join, a
    # quarter cheaper than the equivalent NOT EXISTS on DuckDB 1.5.5
    return (
        f"CREATE OR REPLACE TEMP MACRO {function}() AS TABLE "
        f"SELECT x.* FROM system.main.{function}() x ANTI JOIN (SELECT nspname, name "
        f"FROM {OWNERS} WHERE class = '{cls}' AND owner_org NOT IN ('', {_lit(org)})) o "
        f"ON x.database_name = {_lit(duck_db)} AND o.name = lower(x.{name_col}) "
        f"AND o.nspname = {nsp}"
    )


def scope_to(cur: duckdb.DuckDBPyConnection, org: str) -> None:
    """Make `cur` (a key's DuckDB connection, outside any transaction) list only what
    organisation `org` may see."""
    duck_db = cur.execute("SELECT system.main.current_database()").fetchone()[0]
    cur.execute(";\n".join(macro_sql(function, org, duck_db) for function in SHADOWED))


def unscope(cur: duckdb.DuckDBPyConnection) -> None:
    """Undo `scope_to` on a pooled connection before it goes back to the pool."""
    for function in SHADOWED:
        cur.execute(f"DROP MACRO TABLE IF EXISTS temp.main.{function}")
