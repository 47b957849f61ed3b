"""A key's `allowed_schemas` / `allowed_tables`: which relations its SQL may name.

Grants add up: a relation is allowed when its schema is in `allowed_schemas` or it is
one of `allowed_tables` (`table` means public.table; `schema.table` names the schema).
An empty list grants nothing; null (no limit) leaves that part unrestricted, and a key
with both null is not limited at all. `public` and DuckDB's `main` are one schema.

Always allowed, so clients can connect and agents keep working: the catalog
(pg_catalog, information_schema, the pg_* relations they read unqualified), table
functions that stay inside the database (range(), duckdb_tables(), ...), the agent
table functions and the caller's own `_hatidata_*` relations. Refused for a
limited key: table functions that run SQL text (query(), query_table()), statements
whose tables cannot be determined, USE, ATTACH and three-part names (other than the
catalog's). An unqualified name must be allowed in every schema of the session's
search path (DuckDB takes the first that has it); branch schemas (`branch_*`) hold
copies of main's tables and are judged as main.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from transpiler.dml_cte import RELATION_PREFIX as DML_CTE_PREFIX
from transpiler.external_access import UNCHECKED_FUNCTIONS
from transpiler.relations import Relation, relations_of

CATALOG_SCHEMAS = frozenset({"pg_catalog", "information_schema"})
CATALOG_DATABASES = frozenset({"__hati_catalog", "system"})
AGENT_VIEW_PREFIX = "_hatidata_"  # _hatidata_*: the caller's own rows (core/relations.py)
BRANCH_PREFIX = "branch_"
_VIEW = re.compile(r"CREATE\s+OR\s+REPLACE\s+(?:VIEW|TABLE)\s+__hati_catalog\.pg\.(\w+)", re.I)
# Statements that change how later names resolve, or add databases to resolve them in.
_REFUSED_TAGS = {"USE": "USE", "ATTACH": "ATTACH", "DETACH": "DETACH"}


class LimitError(ValueError):
    """A malformed allowed_schemas / allowed_tables entry."""


def _part(text: str) -> str:
    name = text.strip().strip('"').strip().lower()
    return "main" if name == "public" else name


def parse_schemas(items: Iterable[str] | None) -> frozenset[str] | None:
    if items is None:
        return None
    out = set()
    for item in items:
        name = _part(item)
        if not name or "." in item.strip().strip('"'):
            raise LimitError(f"allowed_schemas: {item!r} is not a schema name")
        out.add(name)
    return frozenset(out)


def parse_tables(items: Iterable[str] | None) -> frozenset[str] | None:
    """'t' -> 'main.t', 'public.t' -> 'main.t', 's.t' -> 's.t' (lower case)."""
    if items is None:
        return None
    out = set()
    for item in items:
        parts = [_part(p) for p in item.split(".")]
        if len(parts) == 1:
            parts = ["main", *parts]
        if len(parts) != 2 or not all(parts) or "*" in item:
            raise LimitError(
                f"allowed_tables: {item!r} is not 'table' or 'schema.table' "
                "(use allowed_schemas for a whole schema)"
            )
        out.add(".".join(parts))
    return frozenset(out)


@lru_cache(maxsize=1)
def catalog_names() -> frozenset[str]:
    """Relations of the pg_catalog stand-ins, which clients name unqualified."""
    names: set[str] = set()
    for entry in resources.files("proxy.db.catalog").iterdir():
        if entry.name.endswith(".sql"):
            names |= {m.lower() for m in _VIEW.findall(entry.read_text(encoding="utf-8"))}
    return frozenset(n for n in names if n.startswith("pg_"))


def search_schemas(search_path: str | None) -> tuple[str, ...]:
    """The user schemas an unqualified name may resolve to (Postgres search_path form)."""
    out = []
    for part in (search_path or "").split(","):
        name = part.strip().strip('"')
        if name and name not in ("$user", "pg_catalog"):
            out.append(_part(name))
    return tuple(dict.fromkeys(out)) or ("main",)


@dataclass(frozen=True)
class TableLimits:
    schemas: frozenset[str] | None = None
    tables: frozenset[str] | None = None  # 'schema.table'

    @classmethod
    def of(cls, schemas: Iterable[str] | None, tables: Iterable[str] | None) -> TableLimits | None:
        """None when the key is not limited (both null); LimitError on bad entries."""
        if schemas is None and tables is None:
            return None
        return cls(parse_schemas(schemas), parse_tables(tables))

    def allows(self, schema: str, table: str) -> bool:
        schema = "main" if schema.startswith(BRANCH_PREFIX) else _part(schema)
        if self.schemas is not None and schema in self.schemas:
            return True
        if self.tables is not None and f"{schema}.{table.lower()}" in self.tables:
            return True
        return self.schemas is None and self.tables is None

    def allows_schema(self, schema: str) -> bool:
        """CREATE / DROP SCHEMA: the whole schema must be granted."""
        return self.schemas is not None and _part(schema) in self.schemas

    def covers(self, other: TableLimits | None) -> bool:
        """Whether every relation `other` allows is allowed here (no widening on grant)."""
        if other is None:
            return False
        if other.schemas and (self.schemas is None or not other.schemas <= self.schemas):
            return False
        return all(self.allows(*t.split(".", 1)) for t in other.tables or ())

    def refusal(
        self, sql: str, kind: str, tag: str, skip: frozenset[str], search_path: str | None
    ) -> str | None:
        """What in the statement this key may not touch, named for "permission denied for
        ..." (e.g. "relation secret.t", "schema s", "USE", "query_table()"); or None."""
        if tag in _REFUSED_TAGS:
            return _REFUSED_TAGS[tag]
        found = relations_of(sql, skip)
        if found.unchecked is not None:
            return found.unchecked
        for fn in found.functions:
            if fn in UNCHECKED_FUNCTIONS:
                return f"{fn}()"
        reading = kind in ("select", "show", "explain")
        for rel in found.relations:
            bad = self._relation(rel, reading, search_path)
            if bad is not None:
                return bad
        return None

    def _relation(self, rel: Relation, reading: bool, search_path: str | None) -> str | None:
        if rel.catalog in CATALOG_DATABASES or rel.schema in CATALOG_SCHEMAS:
            return None if reading else f"relation {rel}"
        if (rel.catalog, rel.schema) == ("temp", "main") and rel.name.startswith(DML_CTE_PREFIX):
            # A data-modifying WITH's RETURNING rows (proxy/pgserver/dml_ctes.py): the
            # connection's own temp table, filled by a statement checked here itself.
            return None
        if rel.catalog:  # database.schema.table: only the catalog's databases
            return f"relation {rel}"
        if not rel.name:
            return None if self.allows_schema(rel.schema) else f"schema {rel.schema}"
        if rel.schema:
            if rel.schema == "main" and rel.name.startswith(AGENT_VIEW_PREFIX) and reading:
                return None
            return None if self.allows(rel.schema, rel.name) else f"relation {rel}"
        if reading and (rel.name in catalog_names() or rel.name.startswith(AGENT_VIEW_PREFIX)):
            return None
        for schema in search_schemas(search_path):
            if not self.allows(schema, rel.name):
                where = "" if schema == "main" else f" (in schema {schema})"
                return f"relation {rel.name}{where}"
        return None
