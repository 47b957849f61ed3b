"""Create the pg_catalog / information_schema compatibility objects in a DuckDB database.

Where the objects live, and why
-------------------------------
DuckDB keeps its own (partial) ``pg_catalog`` and ``information_schema`` in the read-only
``system`` catalog: ``CREATE OR REPLACE VIEW pg_catalog.pg_class`` fails ("Cannot create
entry in system catalog"), and no database may have a schema with either name. So:

* ``install()`` ATTACHes an in-memory database ``__hati_catalog`` with two schemas:
  ``pg`` (stands in for ``pg_catalog``) and ``info`` (for ``information_schema``).
  Being in memory, it never touches the user's database file and is rebuilt from
  these .sql files on every start (``CREATE OR REPLACE``: running twice is harmless).
  An attached database is shared by every cursor of the DuckDB instance.
* ``prepare_cursor()`` puts ``__hati_catalog.pg`` on the cursor's ``search_path``
  after the user's ``main``. Unqualified names (``pg_type``, ``format_type(...)``)
  then resolve to these objects before DuckDB's built-in ones. DuckDB's search_path is
  per connection and cannot be set globally, so the engine must call it on each new
  cursor.
* Qualified names need the transpiler: ``pg_catalog.x`` -> ``x`` (the search path
  finds ours, or DuckDB's built-in function of that name) and
  ``information_schema.x`` -> ``__hati_catalog.info.x``. reg* casts become the
  ``__hati_reg*`` macros documented in 45_reg.sql.

Identity mapping: DuckDB schema ``main`` is shown as ``public`` (oid 2200), this
package's schemas as ``pg_catalog`` (11) and ``information_schema`` (13000); every
object is owned by role oid 10. Type OIDs come from ``proxy.wire.oids`` (see types.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import resources

import duckdb

from proxy.core.names import CATALOG_DB, INFO_SCHEMA, PG_SCHEMA
from proxy.db import backend_functions, json_functions, pg_udfs
from proxy.db.backends import Backends
from proxy.db.catalog import char_columns, functions, snapshot
from proxy.db.catalog.types import duck_kind_rows, pg_type_rows
from transpiler import numeric_type

SQL_FILES = (
    "10_types.sql",
    "20_namespaces.sql",
    "30_relations.sql",
    "35_constraints.sql",
    "40_system.sql",
    "42_pg_builtins.sql",
    "45_reg.sql",
    "50_functions.sql",
    "52_dependencies.sql",
    "55_jsonb.sql",
    "56_json_functions.sql",
    "60_views.sql",
    "70_information_schema.sql",
    "80_hati_functions.sql",
    "82_pg_functions.sql",
    "83_pg_functions_more.sql",
    "85_server_functions.sql",
)
# PostgreSQL 15's system catalogs and their own OIDs (pg_class.oid of the catalog table):
# a catalog here of one of these names is listed in pg_class with that OID, and has
# PostgreSQL's `tableoid` system column holding it (pg_dump reads x.tableoid, x.oid of
# every catalog it scans, and joins pg_depend / pg_description on classid = tableoid).
CATALOG_OIDS = {
    "pg_aggregate": 2600, "pg_am": 2601, "pg_amop": 2602, "pg_amproc": 2603,
    "pg_attrdef": 2604, "pg_attribute": 1249, "pg_auth_members": 1261, "pg_authid": 1260,
    "pg_cast": 2605, "pg_class": 1259, "pg_collation": 3456, "pg_constraint": 2606,
    "pg_conversion": 2607, "pg_database": 1262, "pg_db_role_setting": 2964,
    "pg_default_acl": 826, "pg_depend": 2608, "pg_description": 2609, "pg_enum": 3501,
    "pg_event_trigger": 3466, "pg_extension": 3079, "pg_foreign_data_wrapper": 2328,
    "pg_foreign_server": 1417, "pg_foreign_table": 3118, "pg_index": 2610,
    "pg_inherits": 2611, "pg_init_privs": 3394, "pg_language": 2612,
    "pg_largeobject": 2613, "pg_largeobject_metadata": 2995, "pg_namespace": 2615,
    "pg_opclass": 2616, "pg_operator": 2617, "pg_opfamily": 2753, "pg_parameter_acl": 6243,
    "pg_partitioned_table": 3350, "pg_policy": 3256, "pg_proc": 1255,
    "pg_publication": 6104, "pg_publication_namespace": 6237, "pg_publication_rel": 6106,
    "pg_range": 3541, "pg_replication_origin": 6000, "pg_rewrite": 2618,
    "pg_seclabel": 3596, "pg_sequence": 2224, "pg_shdepend": 1214,
    "pg_shdescription": 2396, "pg_shseclabel": 3592, "pg_statistic": 2619,
    "pg_statistic_ext": 3381, "pg_statistic_ext_data": 3429, "pg_subscription": 6100,
    "pg_subscription_rel": 6102, "pg_tablespace": 1213, "pg_transform": 3576,
    "pg_trigger": 2620, "pg_ts_config": 3602, "pg_ts_config_map": 3603,
    "pg_ts_dict": 3600, "pg_ts_parser": 3601, "pg_ts_template": 3764, "pg_type": 1247,
    "pg_user_mapping": 1418,
}  # fmt: skip
# Settings Postgres has that the session layer does not track (constants here).
EXTRA_SETTINGS = {
    "max_index_keys": "32",
    "block_size": "8192",
    "lc_collate": "C.UTF-8",
    "lc_ctype": "C.UTF-8",
    "max_connections": "100",
    "jit": "off",
    "ssl": "off",
    "search_path": '"$user", public',
}


# PostgreSQL 15's built-in values of the settings initdb writes into postgresql.conf
# (PG15_SETTINGS holds what SHOW prints on such a cluster).
_INITDB_SET = {
    "TimeZone": "GMT",
    "log_timezone": "GMT",
    "default_text_search_config": "pg_catalog.simple",
    "lc_messages": "",
}

# pg_postmaster_start_time(): when this server process started.
_STARTED = datetime.now(UTC)


def _lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def render(sql: str, params: dict[str, str]) -> str:
    for key, value in params.items():
        sql = sql.replace("{{" + key + "}}", value)
    if "{{" in sql:
        raise ValueError(f"unfilled placeholder near: {sql[sql.index('{{') :][:40]!r}")
    return sql


def install(
    conn: duckdb.DuckDBPyConnection,
    *,
    database_name: str = "hatidata",
    database_oid: int = 16384,
    databases: Callable[[], list[tuple[int, str]]] | None = None,
    owner: str = "hatidata",
    users: Sequence[str] = (),
    backends: Backends | None = None,
    declared: Sequence[functions.FunctionDecl] = (),
) -> None:
    """Create (or replace) the compatibility objects; also prepares ``conn`` itself.

    ``database_name`` / ``database_oid`` are what clients see as the database
    (current_database(), pg_database); ``databases`` lists pg_database's (oid, name) rows
    (proxy/db/databases.py; default: this one alone); ``owner`` is role oid 10, owner of everything; ``users`` are
    further roles listed in pg_roles. ``backends`` are the live connections
    pg_stat_activity lists (the server's; none by default). ``declared``: functions
    pg_proc lists beside the built-in ones (``functions.declare``), computed with them.
    """
    duck_db = conn.execute("SELECT system.main.current_database()").fetchone()[0]
    roles = [owner] + [u for u in dict.fromkeys(users) if u != owner]
    role_oids = {r: 10 if i == 0 else 16384 + i for i, r in enumerate(roles)}
    # pg_stat_activity's view and the backend macros call these Python functions.
    json_functions.register(conn)
    pg_udfs.register(conn)
    backend_functions.register(
        conn,
        Backends() if backends is None else backends,
        database_name=database_name,
        database_oid=database_oid,
        databases=databases or (lambda: [(database_oid, database_name)]),
        role_oids=role_oids,
    )
    params = {
        "duck_db": _lit(duck_db),
        "duck_db_ident": _ident(duck_db),
        "database_name": _lit(database_name),
        "database_oid": str(int(database_oid)),
        "owner": _lit(owner),
        "role_rows": ", ".join(f"({oid}, {_lit(r)})" for r, oid in role_oids.items()),
        "settings_rows": ", ".join(
            "(" + ", ".join(_lit(x) for x in row) + ")" for row in settings_rows()
        ),
        "started": _lit(_STARTED.isoformat()),
        "version_banner": _lit(
            f"PostgreSQL {settings()['server_version']} on x86_64-pc-linux-gnu, 64-bit"
        ),
        "pg_type_rows": ", ".join(pg_type_rows()),
        "duck_kind_rows": ", ".join(duck_kind_rows()),
        "hnsw_info": _hnsw_info(conn),
        "bare_numeric": _lit(numeric_type.DUCKDB_TYPE),
        "snapshot_names": ", ".join(_lit(n) for n in snapshot.HIDDEN_TEMP_TABLES),
    }
    # The server's registry of the constraints DuckDB does not keep (foreign keys, the
    # names of CHECKs: proxy/pgserver/foreign_keys.py), with the user's tables.
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_ident(duck_db)}.main.__hati_constraints ("
        "schema_name VARCHAR, table_name VARCHAR, conname VARCHAR, contype VARCHAR, "
        "columns VARCHAR[], ref_schema VARCHAR, ref_table VARCHAR, ref_columns VARCHAR[], "
        'on_delete VARCHAR, on_update VARCHAR, "deferrable" BOOLEAN, deferred BOOLEAN, '
        "expression VARCHAR)"
    )
    # SQL functions as declared (their macros have untyped parameters): argument and
    # result types, volatility, STRICT, the body (transpiler/sql_functions.py).
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_ident(duck_db)}.main.__hati_routines (schema_name VARCHAR,"
        " name VARCHAR, nargs INTEGER, ndefaults INTEGER, arguments VARCHAR,"
        " identity_arguments VARCHAR, arg_oids BIGINT[],"
        " result VARCHAR, result_oid BIGINT, retset BOOLEAN, volatility VARCHAR,"
        " strict BOOLEAN, body VARCHAR)"
    )
    # BEFORE ROW triggers (proxy/pgserver/triggers.py).
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_ident(duck_db)}.main.__hati_triggers ("
        "schema_name VARCHAR, table_name VARCHAR, name VARCHAR, function_schema VARCHAR, "
        "function_name VARCHAR, tgtype INTEGER, columns VARCHAR[], when_text VARCHAR, "
        "enabled VARCHAR)"
    )
    # A view's columns over varchar(n) / varchar / char(n) columns (pgserver/view_types.py)
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_ident(duck_db)}.main.__hati_view_types (schema_name "
        "VARCHAR, view_name VARCHAR, view_sql VARCHAR, attnum BIGINT, typid BIGINT, n INTEGER)"
    )
    # Domains (proxy/pgserver/domains.py): each a DuckDB type alias plus this row, and its
    # CHECKs (conname, the expression as written and in DuckDB's words).
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_ident(duck_db)}.main.__hati_domains (schema_name VARCHAR,"
        " name VARCHAR, base VARCHAR, base_oid BIGINT, base_typmod INTEGER, duck_type VARCHAR,"
        " default_pg VARCHAR, default_duck VARCHAR, not_null BOOLEAN, collation_name VARCHAR)"
    )
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_ident(duck_db)}.main.__hati_domain_checks ("
        "schema_name VARCHAR, domain_name VARCHAR, conname VARCHAR, expr_pg VARCHAR,"
        " expr_duck VARCHAR, validated BOOLEAN)"
    )
    # COMMENT ON SCHEMA / CONSTRAINT (proxy/pgserver/object_comments.py): kind n (a
    # schema, by name) or c (a constraint, by schema, table and name).
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_ident(duck_db)}.main.__hati_comments (kind VARCHAR, "
        "schema_name VARCHAR, table_name VARCHAR, name VARCHAR, description VARCHAR)"
    )
    # Materialized views: their stored tables' defining queries (proxy/pgserver/matviews.py).
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_ident(duck_db)}.main.__hati_matviews (schema_name VARCHAR,"
        " name VARCHAR, definition VARCHAR, query VARCHAR, populated BOOLEAN)"
    )
    conn.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {CATALOG_DB}")
    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {PG_SCHEMA}")
    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {INFO_SCHEMA}")
    _install_catalog_oids(conn)
    char_columns.create_type(conn)
    # Unqualified names in macros (pg_table_is_visible's pg_class) are checked when the
    # macro is made: against ours, as they are found when called (snapshot.py).
    prepare_cursor(conn)
    for name in SQL_FILES:
        _run_file(conn, name, params)
    _add_tableoid(conn)
    functions.add(conn, declared)
    functions.refresh(conn)
    prepare_cursor(conn)


def _run_file(conn: duckdb.DuckDBPyConnection, name: str, params: dict[str, str]) -> None:
    """One catalog .sql file, run as one script (bench/start.py times each)."""
    text = resources.files("proxy.db.catalog").joinpath(name).read_text(encoding="utf-8")
    try:
        conn.execute(render(text, params))
    except duckdb.Error as exc:  # name the file: the DuckDB message alone is not enough
        raise RuntimeError(f"catalog {name}: {exc}") from exc


def _install_catalog_oids(conn: duckdb.DuckDBPyConnection) -> None:
    """``__hati_catalog_oid``: PostgreSQL's OID of each system catalog, by name (pg_class
    lists a catalog of these names with it; 30_relations.sql)."""
    conn.execute(
        f"CREATE OR REPLACE TABLE {PG_SCHEMA}.__hati_catalog_oid (relname VARCHAR, oid BIGINT)"
    )
    rows = ", ".join(f"({_lit(name)}, {oid})" for name, oid in CATALOG_OIDS.items())
    conn.execute(f"INSERT INTO {PG_SCHEMA}.__hati_catalog_oid VALUES {rows}")  # one statement


def _add_tableoid(conn: duckdb.DuckDBPyConnection) -> None:
    """Give every catalog PostgreSQL has PostgreSQL's ``tableoid`` system column.

    A table gets a column whose default is its OID. A view ``pg_x`` is renamed
    ``__hati_base_pg_x`` (hidden, like every ``__hati`` helper) and ``pg_x`` becomes
    ``SELECT *, oid AS tableoid`` over it: DuckDB binds view names when a query runs, so
    views and macros reading ``pg_x`` see the new one.
    """
    rows = conn.execute(
        "SELECT table_name, table_type FROM information_schema.tables "
        f"WHERE table_catalog = '{CATALOG_DB}' AND table_schema = 'pg'"
    ).fetchall()
    types = char_columns.column_types(conn)
    for name, kind in rows:
        oid = CATALOG_OIDS.get(name)
        if oid is None:
            continue
        if kind == "VIEW":
            base = f"{PG_SCHEMA}.{_ident('__hati_base_' + name)}"
            char_casts = char_columns.replace_clause(types, name)  # "char" columns
            conn.execute(f"DROP VIEW IF EXISTS {base}")
            conn.execute(
                f"ALTER VIEW {PG_SCHEMA}.{_ident(name)} RENAME TO {_ident('__hati_base_' + name)}"
            )
            conn.execute(
                f"CREATE VIEW {PG_SCHEMA}.{_ident(name)} AS SELECT *"
                f"{char_casts}, {oid}::BIGINT AS tableoid "
                f"FROM {base}"
            )
        else:
            char_columns.alter_table(conn, types, name)
            conn.execute(
                f"ALTER TABLE {PG_SCHEMA}.{_ident(name)} "
                f"ADD COLUMN IF NOT EXISTS tableoid BIGINT DEFAULT {oid}"
            )


def _hnsw_info(conn: duckdb.DuckDBPyConnection) -> str:
    """The HNSW indexes (database, schema, index, metric): from DuckDB's vss extension when it
    is loaded (the server loads it before installing the catalog), else none."""
    loaded = conn.execute(
        "SELECT count(*) FROM system.main.duckdb_functions() WHERE function_name = 'pragma_hnsw_index_info'"
    ).fetchone()[0]
    if loaded:
        return (
            "SELECT catalog_name AS database_name, schema_name, index_name, metric "
            "FROM pragma_hnsw_index_info()"
        )
    return (
        "SELECT NULL::VARCHAR AS database_name, NULL::VARCHAR AS schema_name, "
        "NULL::VARCHAR AS index_name, NULL::VARCHAR AS metric WHERE FALSE"
    )


def settings() -> dict[str, str]:
    """pg_settings rows: the session layer's defaults win, so SHOW and pg_settings agree."""
    from proxy.db.settings import DEFAULTS

    return {**EXTRA_SETTINGS, **DEFAULTS}


def settings_rows() -> list[tuple[str, str, str, str, str]]:
    """(name, setting, context, category, boot_val) of every PostgreSQL 15 setting and the
    server's own: the value SHOW prints, PostgreSQL's as the boot value (psql's \\dconfig
    lists those whose value differs from it)."""
    from proxy.db.pg_gucs import PG15_SETTINGS

    ours = settings()
    names = {n.lower(): n for n in PG15_SETTINGS}
    rows = []
    for name, (context, group, value) in PG15_SETTINGS.items():
        setting = next((v for k, v in ours.items() if k.lower() == name.lower()), value)
        # an internal setting (lc_collate, server_version) has no boot value to differ from
        boot = setting if context == "internal" else _INITDB_SET.get(name, value)
        rows.append((name, setting, context, group, boot))
    for name, setting in ours.items():
        if name.lower() not in names:
            rows.append((name, setting, "user", "Hatiproxy", setting))
    return rows


def search_path(conn: duckdb.DuckDBPyConnection) -> str:
    """The DuckDB search_path a client cursor needs: user schema first, then ours."""
    duck_db = conn.execute("SELECT system.main.current_database()").fetchone()[0]
    return f"{_ident(duck_db)}.main,{PG_SCHEMA}"


def prepare_cursor(cur: duckdb.DuckDBPyConnection) -> None:
    """Run on every new DuckDB cursor (connection): search_path is per connection."""
    cur.execute("SET search_path = " + _lit(search_path(cur)))
