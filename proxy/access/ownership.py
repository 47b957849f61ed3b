"""Object owners, as in PostgreSQL: what a login creates belongs to it.

A table, view, macro (function), sequence, index, schema or type created over any
interface belongs to the login that created it (`Identity.login`: a server superuser's
user name, or an API key's organisation and bound agent, never a name the client
types). Only its owner or a server superuser may ALTER, RENAME, DROP, COMMENT ON or
CREATE OR REPLACE it, and CREATE INDEX needs the table's owner: 42501 `must be owner of
table t` otherwise (PostgreSQL's wording per kind). Objects without a record (made
before ownership was tracked, or by the server itself) belong to the bootstrap
superuser. Renames carry the owner; CREATE OR REPLACE keeps it.

Records live in `hatidata_internal.object_owners`, written through the server's pooled
cursors like the keys (proxy/access/keys.py), with an in-memory copy for the checks.
`guard(cur, st, who, search_path)` runs on the session's DuckDB cursor (worker thread)
before a DDL statement, resolving each target to the object DuckDB would take (temp
first, then the search path); it returns what to record once the statement succeeded.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

import duckdb

from proxy.access import stored_sql, system_objects
from proxy.access.table_limits import search_schemas
from proxy.core.identity import Identity
from proxy.core.names import INTERNAL_SCHEMA, PG_SCHEMA
from proxy.db.commit_clock import CLOCK
from proxy.db.pool import PooledDB
from proxy.wire.errors import PgError
from transpiler import Statement
from transpiler.database_ddl import DatabaseDdl
from transpiler.ddl_targets import Target, targets
from transpiler.domains import DomainDdl

log = logging.getLogger("hatiproxy.access")
TABLE = f"{INTERNAL_SCHEMA}.object_owners"
CATALOG_OWNERS = f"{PG_SCHEMA}.__hati_owners"  # what pg_class & co. read (20_namespaces.sql)
CATALOG_ROLES = f"{PG_SCHEMA}.__hati_roles"
SCHEMA_SQL = (
    f"CREATE SCHEMA IF NOT EXISTS {INTERNAL_SCHEMA}",
    f"CREATE TABLE IF NOT EXISTS {TABLE} (class VARCHAR NOT NULL, schema_name VARCHAR NOT NULL,"
    " name VARCHAR NOT NULL, owner_kind VARCHAR NOT NULL, owner_org VARCHAR NOT NULL,"
    " owner_name VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " PRIMARY KEY (class, schema_name, name))",
)
Login = tuple[str, str, str]  # Identity.login
Key = tuple[str, str, str]  # (class, schema, name); class: relation, sequence, index, ...
# Tables and views share one name space in DuckDB (as relations do in PostgreSQL).
_CLASS = {"table": "relation", "view": "relation", "relation": "relation"}
_CHECKED = ("replace", "drop", "alter", "rename", "comment")
_EXISTS = {
    # a materialized view is a table with a registry row (proxy/pgserver/matviews.py)
    "relation": "SELECT CASE WHEN $1 <> 'temp' AND EXISTS (SELECT 1 FROM main.__hati_matviews m "
    "WHERE m.schema_name = $2 AND lower(m.name) = $3) THEN 'materialized view' ELSE 'table' "
    "END FROM system.main.duckdb_tables() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(table_name) = $3 UNION ALL SELECT 'view' FROM system.main.duckdb_views() "
    "WHERE database_name = $1 AND schema_name = $2 AND lower(view_name) = $3 AND NOT internal",
    "sequence": "SELECT 'sequence' FROM system.main.duckdb_sequences() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(sequence_name) = $3",
    "index": "SELECT 'index' FROM system.main.duckdb_indexes() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(index_name) = $3",
    "function": "SELECT 'function' FROM system.main.duckdb_functions() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(function_name) = $3 AND function_type IN ('macro', "
    "'table_macro') LIMIT 1",
    "type": "SELECT 'type' FROM system.main.duckdb_types() WHERE database_name = $1 AND "
    "schema_name = $2 AND lower(type_name) = $3 AND NOT internal LIMIT 1",
    "schema": "SELECT 'schema' FROM system.main.duckdb_schemas() WHERE database_name = $1 AND "
    "lower(schema_name) = $3 AND $2 = ''",
}


class Owners(Protocol):
    """Who owns what, as a check sees it: the records, or a session's view with its
    uncommitted changes (proxy/access/owner_txn.py)."""

    def owner(self, key: Key) -> Login | None: ...


_HINT = "only the owner of an object or a server superuser may change or drop it"


def login_name(login: Login) -> str:
    """How a login is shown (pg_roles, psql's Owner column): a user name, agent@org for a
    key bound to an agent, org for an organisation key."""
    kind, org, name = login
    if kind == "user":
        return name or "hatidata"
    return f"{name}@{org}" if name else org


class OwnerStore:
    """Who owns what: the records, in memory, persisted through the pooled cursors."""

    def __init__(self, db: PooledDB | None, catalog: PooledDB | None = None) -> None:
        self.db = db  # the records: the agent database, out of client SQL's reach
        self.catalog = catalog  # the users' database, whose pg catalog shows the owners
        self.owners: dict[Key, Login] = {}
        if db is not None:
            db.run_sync(self._load)
        if catalog is not None:
            catalog.run_sync(self._show_all)

    def _load(self, cur: duckdb.DuckDBPyConnection) -> None:
        for sql in SCHEMA_SQL:
            cur.execute(sql)
        rows = cur.execute(
            f"SELECT class, schema_name, name, owner_kind, owner_org, owner_name FROM {TABLE}"
        ).fetchall()
        self.owners = {(r[0], r[1], r[2]): (r[3], r[4], r[5]) for r in rows}

    def _show_all(self, cur: duckdb.DuckDBPyConnection) -> None:
        for key, login in self.owners.items():
            _show(cur, key, login)

    def owner(self, key: Key) -> Login | None:
        return self.owners.get(key)

    def others_own(self, org: str) -> bool:
        """Whether a key of an organisation other than `org` owns anything here."""
        return any(login[0] == "key" and login[1] != org for login in self.owners.values())

    # A service of the layer it was installed with: it stops being the process's store
    # when that layer stops (its pools close; a later layer in the process starts clean).
    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Loaded at construction."""

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        release(self)

    def apply(self, changes: list[Callable[[OwnerStore], None]]) -> None:
        for change in changes:
            change(self)

    def set(self, key: Key, login: Login) -> None:
        self.owners[key] = login

        def write(cur: duckdb.DuckDBPyConnection) -> None:
            cur.execute(
                f"INSERT OR REPLACE INTO {TABLE} (class, schema_name, name, owner_kind,"
                " owner_org, owner_name) VALUES (?, ?, ?, ?, ?, ?)",
                [*key, *login],
            )

        self._write(write, lambda cur: _show(cur, key, login))

    def drop(self, key: Key) -> None:
        if self.owners.pop(key, None) is not None:

            def write(cur: duckdb.DuckDBPyConnection) -> None:
                where = "class = ? AND schema_name = ? AND name = ?"
                cur.execute(f"DELETE FROM {TABLE} WHERE {where}", list(key))

            self._write(write, lambda cur: _show(cur, key, None))
        if key[0] == "schema":  # DROP SCHEMA ... CASCADE: what was in it went with it
            for inner in [k for k in self.owners if k[0] != "schema" and k[1] == key[2]]:
                self.drop(inner)

    def _write(
        self,
        record: Callable[[duckdb.DuckDBPyConnection], None],
        show: Callable[[duckdb.DuckDBPyConnection], None],
    ) -> None:
        try:
            if self.db is not None:
                self.db.run_sync(record)
            if self.catalog is not None:  # counted: keys' catalog snapshots re-check it
                with CLOCK.writing():
                    self.catalog.run_sync(show)
        except duckdb.Error as exc:  # the in-memory copy holds until the next start
            log.error("could not record an object owner: %s", exc)


def role_oid(name: str) -> int:
    """A login's role OID in pg_roles: stable across restarts, above PostgreSQL's range
    for bootstrap objects and configured users (16384 + n)."""
    return 1_000_000 + zlib.crc32(name.encode("utf-8")) % 1_000_000_000


def _show(cur: duckdb.DuckDBPyConnection, key: Key, login: Login | None) -> None:
    """Mirror one record into the catalog (pg_class.relowner, psql's Owner column)."""
    cls, schema, name = key
    nspname = "public" if schema == "main" else schema
    cur.execute(
        f"DELETE FROM {CATALOG_OWNERS} WHERE class = ? AND nspname = ? AND name = ?",
        [cls, nspname if cls != "schema" else "", name],
    )
    if login is None:
        return
    shown = login_name(login)
    known = cur.execute(f"SELECT oid FROM {CATALOG_ROLES} WHERE rolname = ?", [shown]).fetchone()
    if known is None:
        oid = role_oid(shown)
        cur.execute(
            f"INSERT INTO {CATALOG_ROLES} (oid, rolname, rolsuper) VALUES (?, ?, ?)",
            [oid, shown, login[0] == "user"],
        )
    else:
        oid = known[0]
    cur.execute(
        f"INSERT INTO {CATALOG_OWNERS} VALUES (?, ?, ?, ?, ?)",
        [cls, nspname if cls != "schema" else "", name, oid, login[1] if login[0] == "key" else ""],
    )


_store: OwnerStore | None = None


def install(db: PooledDB | None, catalog: PooledDB | None = None) -> OwnerStore:
    """Load the records (at start, with the access layer): `db` holds them, `catalog` is
    the users' database whose objects they describe."""
    global _store
    _store = OwnerStore(db, catalog)
    if catalog is not None:
        for repair in catalog.run_sync(system_objects.shadows):
            log.warning(
                "an object in public hides the pg_catalog object of the same name from "
                "every client (clients such as psql then list nothing); a superuser "
                "repairs it with: %s",
                repair,
            )
    return _store


def release(owners: OwnerStore) -> None:
    """`owners` no longer answers for the process (its layer stopped)."""
    global _store
    if _store is owners:
        _store = None


def store() -> OwnerStore:
    global _store
    if _store is None:
        _store = OwnerStore(None)
    return _store


@dataclass(frozen=True)
class Found:
    schema: str
    kind: str  # table, view, sequence, ...


def changes_definitions(st: Statement) -> bool:
    """Whether `st` may create, replace or drop a view or macro (stored_sql is re-read)."""
    return st.kind == "ddl" and any(w in st.tag for w in ("VIEW", "MACRO", "FUNCTION", "SCHEMA"))


def after(
    cur: duckdb.DuckDBPyConnection,
    st: Statement,
    changes: list,
    record: Callable[[list], None] | None = None,
) -> None:
    """Once `st` succeeded: record its owners (`record`: a session's, which keeps them
    pending in a transaction block), re-read views and macros it changed."""
    if record is None:
        store().apply(changes)
    else:
        record(changes)
    if changes_definitions(st):
        stored_sql.refresh(cur)
        stored_sql.dirty = True  # until the transaction is known to be kept


def after_rollback(cur: duckdb.DuckDBPyConnection) -> None:
    """A ROLLBACK may restore views or macros a DDL dropped: read them again."""
    if stored_sql.dirty:
        stored_sql.refresh(cur)


# Registries the transpiler writes in the same DuckDB call as a DDL statement's own object
# (a function's declaration next to its macro): the statement's, not the login's, rows.
_SERVER_REGISTRIES = frozenset({"__hati_routines", "__hati_triggers"})


def server_ddl_targets(st: Statement) -> tuple[Target, ...] | None:
    """The targets of DDL the server carries out itself rather than by its SQL text:
    domains (a type) and triggers (an ALTER of their table, whose owner alone may add,
    drop or switch one, as in PostgreSQL); None for any other statement."""
    command = st.command
    if isinstance(command, DomainDdl):
        if command.action == "drop":
            names = command.names or ((command.schema, command.name),)
            return tuple(
                Target("drop", "type", "", schema or "", name, if_exists=command.if_exists)
                for schema, name in names
            )
        action = "create" if command.action == "create" else "alter"
        if command.action == "rename" and command.new_name:
            action = "rename"
        return (
            Target(action, "type", "", command.schema or "", command.name,
                   new_name=command.new_name or ""),
        )  # fmt: skip
    trigger = st.trigger
    if trigger is not None:
        return (Target("alter", "relation", "", trigger.schema or "", trigger.table),)
    return None


def _server_registry_write(t: Target) -> bool:
    """A DDL statement's row in a server registry (only the transpiler puts one there: a
    client's DDL text is one statement, and its INSERT / DELETE is DML, checked as such)."""
    return t.action == "write" and t.schema in ("", "main") and t.name in _SERVER_REGISTRIES


def needs_guard(st: Statement) -> bool:
    """Whether `st` may create or change an object, or write into a system relation."""
    if st.kind == "ddl" or st.tag == "COMMENT":
        return True
    if isinstance(st.command, DatabaseDdl):
        return False  # a database's organisation decides (proxy/pgserver/databases.py)
    if st.kind == "utility" and st.tag.startswith("ALTER "):
        return True  # ALTER TABLE ... DISABLE TRIGGER ALL (the foreign keys' too), OWNER TO
    if st.kind in ("insert", "update", "delete", "merge", "copy"):
        low = st.sql.lower()
        return any(h in low for h in system_objects.WRITE_HINTS)
    return False


def guard(
    cur: duckdb.DuckDBPyConnection,
    st: Statement,
    who: Identity,
    search_path: str | None,
    owners: Owners | None = None,
) -> list[Callable[[OwnerStore], None]]:
    """Refuse what `who` may not change (PgError 42501); else the record changes to apply
    once the statement succeeded. `owners`: the session's view (its block's pending
    changes), the records by default."""
    found = server_ddl_targets(st)
    if found is None:
        found = targets(st.sql)
        if found is not None and st.kind == "ddl":
            found = tuple(t for t in found if not _server_registry_write(t))
    if found is None:
        if who.superuser:
            return []
        raise PgError(
            "42501",
            f"permission denied: the objects {st.tag or 'this statement'} changes cannot be "
            "determined",
            hint="write the statement in a form PostgreSQL or DuckDB documents",
        )
    if not found:
        return []
    user_db = system_objects.user_database(cur)
    system_objects.check(cur, found, who, user_db)
    if owners is None:
        owners = store()
    changes: list[Callable[[OwnerStore], None]] = []
    for t in found:
        if t.temporary or t.catalog not in ("", user_db):
            continue
        if t.action == "write":
            if st.tag == "TRUNCATE TABLE":  # PostgreSQL's TRUNCATE privilege: the owner's
                _require_truncate(cur, owners, t, who, user_db, search_path)
            continue
        cls = _CLASS.get(t.kind, t.kind)
        if t.kind == "index" and t.on_table is not None and t.action in ("create", "replace"):
            table = Target("alter", "relation", *t.on_table)
            where = _resolve(cur, table, user_db, search_path)
            if where is not None:
                _require(
                    owners, ("relation", where.schema, table.name), where.kind, table.name, who
                )
            schema = where.schema if where is not None else _create_schema(t, search_path)
            key = ("index", schema, t.name)
            changes.append(lambda s, key=key, login=who.login: s.set(key, login))
            continue
        where = _resolve(cur, t, user_db, search_path)
        if where is None and t.kind == "relation" and t.action in ("alter", "rename"):
            # ALTER TABLE names any relation in PostgreSQL: a sequence or an index too
            for kind in ("sequence", "index"):
                where = _resolve(cur, replace(t, kind=kind), user_db, search_path)
                if where is not None:
                    cls = kind
                    break
        if where is None and t.kind in ("index", "relation") and t.action in ("alter", "rename"):
            # a PRIMARY KEY's / UNIQUE constraint's index (DuckDB's own, not listed as an
            # index): renaming it renames the constraint, its table's owner's to do
            row = cur.execute(
                f"SELECT schema_name, table_name FROM {PG_SCHEMA}.__hati_index_list "
                "WHERE index_name = ? AND contype IS NOT NULL AND database_name = ? "
                "AND (? = '' OR schema_name = ?) LIMIT 1",
                [t.name, user_db, t.schema, t.schema],
            ).fetchone()
            if row is not None:
                t = Target("alter", "relation", "", row[0], row[1])
                cls = "relation"
                where = _resolve(cur, t, user_db, search_path)
        if where == Found("", "temp"):
            continue  # the session's own temporary object
        if t.action == "create":
            if where is None or not t.if_exists:
                key = (cls, _create_schema(t, search_path), t.name)
                changes.append(lambda s, key=key, login=who.login: s.set(key, login))
            continue
        if where is None:
            if t.action == "replace":
                key = (cls, _create_schema(t, search_path), t.name)
                changes.append(lambda s, key=key, login=who.login: s.set(key, login))
            continue  # DuckDB reports the missing object itself
        key = (cls, where.schema, t.name)
        _require(owners, key, where.kind, t.name, who)
        if t.action == "drop":
            changes.append(lambda s, key=key: s.drop(key))
        elif t.action == "rename" and t.new_name:
            owner = owners.owner(key)
            # SET SCHEMA: the same name in the new schema (search_schemas: public is main)
            to = search_schemas(t.new_schema)[0] if t.new_schema else where.schema
            new_key = (cls, to, t.new_name)
            if owner is not None:
                changes.append(lambda s, a=key, b=new_key, o=owner: (s.drop(a), s.set(b, o)))
    return changes


def _require_truncate(
    cur: duckdb.DuckDBPyConnection,
    owners: Owners,
    t: Target,
    who: Identity,
    user_db: str,
    search_path: str | None,
) -> None:
    where = _resolve(cur, t, user_db, search_path)
    if who.superuser or where is None or where == Found("", "temp"):
        return  # DuckDB reports a missing table itself
    if owners.owner(("relation", where.schema, t.name)) != who.login:
        raise PgError(
            "42501",
            f"permission denied for table {t.name}",
            hint="only the owner of a table or a server superuser may truncate it",
        )


def require_owner(owners: Owners, key: Key, kind: str, name: str, who: Identity) -> None:
    """42501 unless `who` owns `key` (a statement the DDL checks do not see as a change:
    REFRESH MATERIALIZED VIEW)."""
    _require(owners, key, kind, name, who)


def _require(owners: Owners, key: Key, kind: str, name: str, who: Identity) -> None:
    if who.superuser:
        return
    if owners.owner(key) != who.login:  # no record: the bootstrap superuser's
        raise PgError("42501", f"must be owner of {kind} {name}", hint=_HINT)


def _create_schema(t: Target, search_path: str | None) -> str:
    if t.kind == "schema":
        return ""
    return t.schema or search_schemas(search_path)[0]


def _resolve(
    cur: duckdb.DuckDBPyConnection, t: Target, user_db: str, search_path: str | None
) -> Found | None:
    """Where DuckDB finds `t`: Found("", "temp") for a temporary object, None if nowhere."""
    cls = _CLASS.get(t.kind, t.kind)
    sql = _EXISTS[cls]
    if cls == "schema":
        rows = cur.execute(sql, [user_db, "", t.name]).fetchall()
        return Found("", "schema") if rows else None
    if t.schema:
        candidates = [(t.catalog or user_db, t.schema)]
    else:
        candidates = [("temp", "main")] + [(user_db, s) for s in search_schemas(search_path)]
    for database, schema in candidates:
        rows = cur.execute(sql, [database, schema, t.name]).fetchall()
        if rows:
            return Found("", "temp") if database == "temp" else Found(schema, rows[0][0])
    return None
