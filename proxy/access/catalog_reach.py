"""What an API key's SQL may not name, so that the catalogs keep listing only its
organisation's objects (proxy/db/catalog/org_scope.py filters DuckDB's catalog functions
for a key's connection with temp macros of the same names):

- DuckDB's real catalog functions, by their qualified names (`system.main.duckdb_tables()`,
  `"system".duckdb_columns()`): they are what the macros read, unfiltered;
- hatiproxy's own relations (`__hati*`: the owner records with each object's organisation,
  the registries of SQL functions' bodies, foreign keys, comments, materialized views),
  which list every organisation's objects.

Pure over DuckDB's tokens and the parsed statement: no I/O."""

from __future__ import annotations

from collections.abc import Sequence

from proxy.db.catalog.org_scope import SHADOWED_NAMES
from transpiler.relations import relations_of

Token = tuple[str, str, int]  # (text, kind, depth) as sql_policy._tokens gives them


def refusal(sql: str, tokens: Sequence[Token], skip: frozenset[str] = frozenset()) -> str | None:
    """What in `sql` (DuckDB SQL, its `tokens`) a key may not read, named for
    "permission denied for ..."; or None. `skip`: the relations agent table functions
    were lifted into (__hati_agent_N), the caller's own rows."""
    found = relations_of(sql, skip)
    if found.internal:
        return f"table {found.internal[0]}"
    name = system_call(tokens)
    return f"function {name}" if name is not None else None


def system_call(tokens: Sequence[Token]) -> str | None:
    """The first filtered catalog function named through DuckDB's system catalog
    (`system.main.duckdb_tables`, `system.duckdb_tables`, quoted or not), or None."""
    texts = [t[0].lower() if t[1] in ("keyword", "identifier") else t[0] for t in tokens]
    for i, text in enumerate(texts):
        if text != "system" or texts[i + 1 : i + 2] != ["."]:
            continue
        rest = texts[i + 2 : i + 5]
        if rest[:2] == ["main", "."]:
            rest = rest[2:]
        if rest and rest[0] in SHADOWED_NAMES:
            return rest[0]
    return None
