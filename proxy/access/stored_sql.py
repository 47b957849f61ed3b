"""Stored views and macros, as DuckDB defines them: what a statement reaches through them.

A view or macro runs with the rights of whoever selects from it here (DuckDB has no
definer rights or per-login sandbox), so a view made by a superuser over `read_csv(...)`
or over a table outside a key's allowed tables would hand that to the key.
`sql_policy` therefore applies its checks to what a statement's views and macros
resolve to, recursively, for identities with an API key.

Cheap: the names and definitions of the database's views and macros are held in memory
(read from `system.main.duckdb_views()` / `system.main.duckdb_functions()` at start and again after each DDL that
may change them); a statement is looked through only when one of its words is such a
name, and each definition is analysed once (cached by its text). hatiproxy's own views
(`_hatidata_*`, `__hati*`: read-only for keys, proxy/access/system_objects.py) are the
server's and not looked through.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from proxy.core.names import INTERNAL_SCHEMA

_SYSTEM = ("_hatidata_", "__hati")


@dataclass(frozen=True)
class Definition:
    kind: str  # "view" or "macro"
    name: str
    query: str  # DuckDB SQL: the view's query, or SELECT <the macro's body>


@dataclass(frozen=True)
class Definitions:
    by_name: dict[str, tuple[Definition, ...]]


_lock = threading.Lock()
_current = Definitions({})
# Set when a DDL re-read the definitions inside a transaction: a ROLLBACK may bring back
# what it dropped, so the definitions are read again then (see proxy/pgserver/runner.py).
dirty = False


def current() -> Definitions:
    return _current


def refresh(cur: duckdb.DuckDBPyConnection) -> None:
    """Read every user view and macro of the client-facing database (a worker thread)."""
    global _current, dirty
    dirty = False
    db = cur.execute("SELECT system.main.current_database()").fetchone()[0]
    rows = cur.execute(
        "SELECT 'view', lower(view_name), sql FROM system.main.duckdb_views() "
        "WHERE database_name = $1 AND NOT internal AND schema_name <> $2 "
        "UNION ALL SELECT 'macro', lower(function_name), macro_definition "
        "FROM system.main.duckdb_functions() WHERE database_name = $1 AND schema_name <> $2 "
        "AND function_type IN ('macro', 'table_macro') AND macro_definition IS NOT NULL",
        [db, INTERNAL_SCHEMA],
    ).fetchall()
    found: dict[str, list[Definition]] = {}
    for kind, name, text in rows:
        if name.startswith(_SYSTEM):
            continue
        query = _view_query(text) if kind == "view" else _macro_query(text)
        found.setdefault(name, []).append(Definition(kind, name, query))
    with _lock:
        _current = Definitions({k: tuple(v) for k, v in found.items()})


def _view_query(create_sql: str) -> str:
    """The query of `CREATE VIEW v AS <query>`; the whole text when it cannot be parsed
    (the checks then see everything the view names, itself included)."""
    try:
        tree = sqlglot.parse_one(create_sql.rstrip(";"), read="duckdb")
    except SqlglotError:
        return create_sql
    query = tree.expression if isinstance(tree, exp.Create) else None
    return query.sql(dialect="duckdb") if query is not None else create_sql


def _macro_query(body: str) -> str:
    stripped = body.lstrip("( \n").upper()
    if stripped.startswith(("SELECT", "WITH", "FROM")) and not body.lstrip().startswith("("):
        return body  # a table macro's query
    return f"SELECT {body}"


def through(words: frozenset[str], limit: int = 32) -> list[Definition]:
    """The definitions a statement with these (lower-case) words reaches, recursively:
    views and macros it names, those their definitions name, and so on."""
    defs = _current.by_name
    todo = [w for w in words if w in defs]  # the statement's few words, not every name
    if not todo:
        return []
    out: list[Definition] = []
    seen: set[str] = set()
    while todo and len(seen) < limit:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for d in defs[name]:
            out.append(d)
            todo += [w for w in words_of(d.query) if w in defs and w not in seen]
    return out


@lru_cache(maxsize=4096)
def words_of(sql: str) -> frozenset[str]:
    """The identifiers and keywords of `sql` as DuckDB tokenizes it, lower case."""
    try:
        tokens = duckdb.tokenize(sql)
    except (duckdb.Error, RuntimeError):
        return frozenset()
    out = set()
    for offset, kind in tokens:
        if kind.name in ("identifier", "keyword"):
            end = offset
            while end < len(sql) and (sql[end].isalnum() or sql[end] in '_$"'):
                end += 1
            out.add(sql[offset:end].strip('"').lower())
    return frozenset(out)
