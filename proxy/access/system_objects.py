"""System objects are read-only for every login but a server superuser, as in PostgreSQL.

- The catalog: `pg_catalog` and `information_schema` (the stand-ins in the attached
  in-memory database `__hati_catalog`, proxy/db/catalog/install.py). The transpiler maps
  `pg_catalog.x` to `x` (the search path finds the stand-in after the user's `main`), so
  `CREATE OR REPLACE VIEW pg_catalog.pg_namespace ...` would land in `main` of the user's
  database file, hide the catalog's `pg_namespace` from every client (psql `\\dt` shows
  nothing) and survive a restart. Any object in `main` named like a catalog relation or
  function is therefore refused too. PostgreSQL refuses catalog changes to superusers as
  well while allow_system_table_mods is off; hatiproxy has no such switch: the stand-ins
  are rebuilt on every start, so a change could only ever hide them.
- DuckDB's catalog functions (duckdb_tables, ...): a key's connection lists its
  organisation's objects through temp macros of those names (proxy/db/catalog/org_scope.py),
  which no key may create, replace or drop.
- hatiproxy's own relations: `main._hatidata_*` (agent views, embedded columns, branch
  snapshots), `main.__hati*` and the `hatidata_internal` schema: server superusers only.

Messages follow PostgreSQL 15: `permission denied for schema pg_catalog` (creating),
`must be owner of table pg_class` (altering, dropping), `permission denied for table
pg_type` (writing rows); for a superuser `permission denied: "pg_class" is a system
catalog`.
"""

from __future__ import annotations

import duckdb

from proxy.core.identity import Identity
from proxy.core.names import CATALOG_DB, INTERNAL_SCHEMA
from proxy.db.catalog.install import CATALOG_OIDS
from proxy.db.catalog.org_scope import SHADOWED_NAMES
from proxy.wire.errors import PgError
from transpiler.ddl_targets import Target

_CATALOG_SCHEMAS = {"pg": "pg_catalog", "info": "information_schema"}
_SYSTEM_PREFIXES = ("_hatidata_", "__hati")
# Text that any write into a protected relation must contain (DML is checked only then).
WRITE_HINTS = ("pg_", "__hati", "_hatidata", INTERNAL_SCHEMA, "information_schema")
_HINT = (
    "pg_catalog, information_schema and hatiproxy's own relations are read-only; "
    "create your objects under another name"
)
_SHADOW_HINT = (
    "hatiproxy looks names up in public before pg_catalog, so a public.{name} would hide "
    "pg_catalog.{name} from every client; choose another name"
)

_catalog_names: frozenset[str] | None = None


def catalog_names(cur: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """Names of the pg_catalog stand-ins (relations and macros), read once from DuckDB."""
    global _catalog_names
    if _catalog_names is None:
        rows = cur.execute(
            "SELECT lower(view_name) FROM system.main.duckdb_views() WHERE database_name = ? "
            "UNION SELECT lower(table_name) FROM system.main.duckdb_tables() WHERE database_name = ? "
            "UNION SELECT lower(function_name) FROM system.main.duckdb_functions() "
            "WHERE database_name = ? AND function_type IN ('macro', 'table_macro')",
            [CATALOG_DB] * 3,
        ).fetchall()
        _catalog_names = frozenset(r[0] for r in rows if not r[0].startswith("__hati"))
    return _catalog_names


_user_db: str | None = None


def user_database(cur: duckdb.DuckDBPyConnection) -> str:
    """The DuckDB name of the client-facing database (one per server process)."""
    global _user_db
    if _user_db is None:
        _user_db = cur.execute("SELECT system.main.current_database()").fetchone()[0]
    return _user_db


def check(
    cur: duckdb.DuckDBPyConnection, targets: tuple[Target, ...], who: Identity, user_db: str
) -> None:
    """42501 when a target is a system object `who` may not change."""
    for t in targets:
        if not who.superuser and SHADOWED_NAMES.intersection((t.name, t.new_name)):
            # a key's catalogs read temp macros of these names (org_scope.py): dropping
            # or replacing one would show it every organisation's objects
            name = t.name if t.name in SHADOWED_NAMES else t.new_name
            raise PgError("42501", _catalog(t, who, "pg_catalog", "function", name), hint=_HINT)
        if t.temporary or t.catalog == "temp":
            continue
        refusal = _refusal(cur, t, who, user_db)
        if refusal is not None:
            message, hint = refusal
            raise PgError("42501", message, hint=hint)


def _refusal(
    cur: duckdb.DuckDBPyConnection, t: Target, who: Identity, user_db: str
) -> tuple[str, str] | None:
    in_user_db = t.catalog in ("", user_db)
    schema = t.schema or ("" if t.kind == "schema" else "main")
    name = t.name
    if t.kind == "schema":
        if name in (INTERNAL_SCHEMA, *_CATALOG_SCHEMAS.values()) and not who.superuser:
            return _not_owner("schema", name), _HINT
        return None
    if t.catalog in (CATALOG_DB, "system") or schema in _CATALOG_SCHEMAS.values():
        shown = _CATALOG_SCHEMAS.get(schema, schema)
        return _catalog(t, who, shown, _catalog_kind(t, shown), name), _HINT
    if not in_user_db:
        return None
    names = catalog_names(cur)
    if schema == "main" and t.action == "rename" and t.new_name in names:
        renamed = Target("create", t.kind, "", "", t.new_name)
        hint = _SHADOW_HINT.format(name=t.new_name)
        return _catalog(
            renamed, who, "pg_catalog", _catalog_kind(renamed, "pg_catalog"), t.new_name
        ), hint
    if schema == "main" and name in names:
        if t.action in ("create", "replace"):
            hint = _SHADOW_HINT.format(name=name)
            return _catalog(t, who, "pg_catalog", _catalog_kind(t, "pg_catalog"), name), hint
        if not _in_main(cur, user_db, name):  # the name finds the catalog's own object
            return _catalog(t, who, "pg_catalog", _catalog_kind(t, "pg_catalog"), name), _HINT
        # else an object in public that hides the catalog's (made before this check
        # existed): its owner or a superuser may drop it.
    if who.superuser:
        return None
    if schema == INTERNAL_SCHEMA:
        return f"permission denied for schema {INTERNAL_SCHEMA}", _HINT
    if schema == "main" and name.startswith(_SYSTEM_PREFIXES):
        if t.action == "write":
            return f"permission denied for table {name}", _HINT
        if t.action == "create":
            return "permission denied for schema public", _HINT
        return _not_owner(_kind(t), name), _HINT
    return None


def _in_main(cur: duckdb.DuckDBPyConnection, user_db: str, name: str) -> bool:
    return bool(
        cur.execute(
            "SELECT 1 FROM system.main.duckdb_tables() WHERE database_name = $1 AND schema_name = 'main' "
            "AND lower(table_name) = $2 UNION ALL SELECT 1 FROM system.main.duckdb_views() "
            "WHERE database_name = $1 AND schema_name = 'main' AND lower(view_name) = $2 "
            "UNION ALL SELECT 1 FROM system.main.duckdb_functions() WHERE database_name = $1 "
            "AND schema_name = 'main' AND lower(function_name) = $2",
            [user_db, name],
        ).fetchall()
    )


def shadows(cur: duckdb.DuckDBPyConnection) -> list[str]:
    """Objects in public named like a catalog relation or function: each hides the
    catalog's from every client (made before hatiproxy refused them). Logged at start."""
    user_db = user_database(cur)
    rows = cur.execute(
        "SELECT 'TABLE', table_name FROM system.main.duckdb_tables() WHERE database_name = $1 "
        "AND schema_name = 'main' UNION ALL SELECT 'VIEW', view_name FROM system.main.duckdb_views() "
        "WHERE database_name = $1 AND schema_name = 'main' AND NOT internal "
        "UNION ALL SELECT DISTINCT 'MACRO', function_name FROM system.main.duckdb_functions() "
        "WHERE database_name = $1 AND schema_name = 'main' "
        "AND function_type IN ('macro', 'table_macro')",
        [user_db],
    ).fetchall()
    names = catalog_names(cur)
    return [f"DROP {kind} public.{name}" for kind, name in rows if name.lower() in names]


def _catalog(t: Target, who: Identity, schema: str, kind: str, name: str) -> str:
    if who.superuser:
        if t.action == "create":
            return f'permission denied to create "{schema}.{name}"'
        return f'permission denied: "{name}" is a system catalog'
    if t.action in ("create", "replace"):
        return f"permission denied for schema {schema}"
    if t.action == "write":
        return f"permission denied for table {name}"
    return _not_owner(kind, name)


def _catalog_kind(t: Target, schema: str) -> str:
    """PostgreSQL's kind of a catalog object: its system catalogs are tables, the rest of
    pg_catalog's relations (pg_tables, pg_roles, ...) and information_schema are views."""
    if t.kind not in ("relation", "table", "view"):
        return t.kind
    return "table" if schema == "pg_catalog" and t.name in CATALOG_OIDS else "view"


def _kind(t: Target) -> str:
    return "table" if t.kind == "relation" else t.kind


def _not_owner(kind: str, name: str) -> str:
    return f"must be owner of {kind} {name}"
