"""An organisation is the boundary of every key, for the users' tables too: a key's SQL
reaches no relation that a key of another organisation owns -- 42501 `permission denied
for table t`, PostgreSQL's words for a table one holds no privilege on. Relations the
server's users own (a superuser's, or older than the owner records) stay open to every
key within its limits (table_limits.py), as before; keys of one organisation share
theirs (there is no GRANT to share across organisations).

Judged by who owns the relation (ownership.py), read off the statement's parsed
relations, off the names functions take as text (nextval('s'), pragma_table_info('t'),
also in a DEFAULT) and off the views and macros it goes through (stored_sql.py): a
sequence is judged as a relation (`permission denied for sequence s`); an unqualified
name is taken in the first schema of the search path where an owner record has it. A
statement whose relations cannot be determined is refused while any other organisation
owns relations here."""

from __future__ import annotations

from collections.abc import Iterable

from proxy.access import stored_sql
from proxy.access.ownership import Key, Login, OwnerStore
from proxy.access.table_limits import BRANCH_PREFIX, CATALOG_SCHEMAS, search_schemas
from transpiler.relations import Relation, relations_of


def refusal(
    sql: str,
    org: str,
    owners: OwnerStore,
    search_path: str | None,
    changed: frozenset[str] | None = None,
) -> str | None:
    """What in `sql` (DuckDB SQL) belongs to another organisation's key, named for
    "permission denied for ..."; or None. `changed`: for DDL, the names of the objects it
    changes, which the owner checks answer for (`must be owner of table t`); a DDL
    statement sqlglot cannot read (ALTER SEQUENCE, DROP TYPE, CREATE TRIGGER) is theirs."""
    found = relations_of(sql)
    if found.unchecked is not None:
        return found.unchecked if changed is None and owners.others_own(org) else None
    mine = [r for r in (*found.relations, *found.named) if changed is None or r.name not in changed]
    return first_foreign(mine, org, owners, search_path)


def first_foreign(
    rels: Iterable[Relation], org: str, owners: OwnerStore, search_path: str | None
) -> str | None:
    """The first of `rels` a key of another organisation owns, named for "permission
    denied for ..." (a FOREIGN KEY's referenced table: PostgreSQL's REFERENCES privilege)."""
    for rel in rels:
        owner = _owner(rel, owners, search_path)
        if owner is not None and owner[1][0] == "key" and owner[1][1] != org:
            if owner[0] == "sequence":
                return f"sequence {rel.name}"
            views = stored_sql.current().by_name.get(rel.name, ())
            return f"{'view' if any(d.kind == 'view' for d in views) else 'table'} {rel.name}"
    return None


def foreign(org: str, owners: OwnerStore, schema: str, name: str) -> bool:
    """Whether a key of another organisation than `org` owns relation schema.name."""
    owner = _owner(Relation("", schema, name.lower()), owners, None)
    return owner is not None and owner[1][0] == "key" and owner[1][1] != org


def _owner(rel: Relation, owners: OwnerStore, search_path: str | None) -> tuple[str, Login] | None:
    """The class (relation or sequence) and owner of the first match on the path."""
    if not rel.name or rel.catalog or rel.schema in CATALOG_SCHEMAS:
        return None  # a schema itself, the catalog's databases, or three-part names
    schemas = (rel.schema,) if rel.schema else search_schemas(search_path)
    for schema in schemas:
        # a branch (branch_*) holds views over main's tables and copies of them: main's
        main = schema == "public" or schema.startswith(BRANCH_PREFIX)
        for kind in ("relation", "sequence"):
            key: Key = (kind, "main" if main else schema, rel.name)
            owner = owners.owner(key)
            if owner is not None:
                return kind, owner
    return None
