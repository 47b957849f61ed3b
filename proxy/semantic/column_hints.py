"""Column hints for the transpiler from DuckDB's catalog (see transpiler/column_hints.py).

One `ColumnHints` per engine, built from `system.main.duckdb_columns()` (vector, text and other
columns of every table and view of the database) and the `_hatidata_embedded_columns`
registry, then kept until the catalog changes, so a statement costs no DuckDB round
trip: `for_sql` is a substring test and a version check. Only statements that call a
semantic function, UPDATE, INSERT or GROUP BY get hints; every other statement's
cache key stays the same.

The hints go stale when:
- DDL or `hatiproxy_embed_column` has run: `catalog_changed` (called through
  ParamTypes.invalidate, which the runner calls right after those);
- a transaction that ran DDL ends (other sessions may have rebuilt the hints before
  its commit): `note` invalidates at that session's next statement after it.
The rebuild (a catalog query, ~2 ms) runs on a worker thread: the session awaits `ready`
before it transpiles, and `for_session` then only reads the built hints, so the event
loop never waits on DuckDB. It happens once per catalog change, and only when such a
statement follows. Catalog changes made outside wire sessions (agent tools) are picked
up at the next change.
For tables the hints do not know, the transpiler's name rule applies, as without.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from proxy.semantic.embedded_columns import REGISTRY, is_embed_column_call
from transpiler import ColumnHints, Statement
from transpiler.column_hints import (
    ARRAY,
    BYTEA,
    DATE,
    INT,
    JSON,
    OTHER,
    TEXT,
    TIMESTAMPTZ,
    VECTOR,
)

log = logging.getLogger("hatiproxy.column_hints")

_VECTOR_TYPE = re.compile(r"^(?:FLOAT|DOUBLE)\[(\d*)\]$")
_COLUMNS_SQL = (
    "SELECT schema_name, table_name, column_name, data_type FROM system.main.duckdb_columns() "
    "WHERE NOT internal AND database_name NOT IN ('system', 'temp') "
    "AND schema_name NOT IN ('pg_catalog', 'information_schema') "
    "ORDER BY schema_name, table_name, column_index"
)


_KEYS_SQL = (
    "SELECT schema_name, table_name, constraint_column_names FROM system.main.duckdb_constraints() "
    "WHERE constraint_type = 'PRIMARY KEY' AND database_name NOT IN ('system', 'temp') "
    "AND schema_name NOT IN ('pg_catalog', 'information_schema')"
)

# Every unique key: PRIMARY KEY and UNIQUE constraints' columns, a unique index's keys as
# DuckDB shows them (when one is an expression the table's arbiters are not all known); and
# the columns whose default draws from a sequence ('drawn').
_UNIQUE_SQL = (
    "SELECT schema_name, table_name, constraint_column_names, 'key' FROM system.main.duckdb_constraints() "
    "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE') AND database_name NOT IN "
    "('system', 'temp') AND schema_name NOT IN ('pg_catalog', 'information_schema') "
    "UNION ALL SELECT schema_name, table_name, [expressions], 'index' FROM system.main.duckdb_indexes() "
    "WHERE is_unique AND database_name NOT IN ('system', 'temp') "
    "UNION ALL SELECT schema_name, table_name, [column_name], 'drawn' FROM system.main.duckdb_columns() "
    "WHERE column_default LIKE 'nextval(%' AND database_name NOT IN ('system', 'temp')"
)

# Identity columns, from the server's constraint registry (proxy/pgserver/identity_ddl.py).
_IDENTITY_SQL = (
    "SELECT schema_name, table_name, columns[1], expression FROM main.__hati_constraints "
    "WHERE contype = 'i'"
)


class HintsCache:
    """The engine's current ColumnHints, rebuilt on first use after a catalog change."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._version = 0
        self._built = -1
        self._hints: ColumnHints | None = None
        self._cursor: Any = None
        # id() of sessions' runners that ran DDL: their transaction's end is a change too.
        # (An id reused after a session ends costs at most one needless rebuild.)
        self._recheck: set[int] = set()
        # Hints read through such a session's own cursor (its transaction's tables), by
        # id() of its runner: (the version they were built at, the hints).
        self._private: dict[int, tuple[int, ColumnHints | None]] = {}

    def invalidate(self) -> None:
        self._version += 1

    @property
    def fresh(self) -> bool:
        return self._built == self._version

    def built(self) -> ColumnHints | None:
        """The hints if they are up to date, else None (the name rule); never builds."""
        return self._hints if self._built == self._version else None

    def current(self) -> ColumnHints | None:
        if self._built == self._version:
            return self._hints
        with self._lock:
            version = self._version
            if self._built != version:
                hints = self._build()
                # The same object while nothing changed: transpile's cache keys stay valid.
                if hints != self._hints:
                    self._hints = hints
                self._built = version
            return self._hints

    def for_runner(self, hints: ColumnHints | None, runner: Any) -> ColumnHints | None:
        """`hints` as `runner` may use them: while its open transaction has run DDL they
        describe the committed catalog, not the one it sees, so they name no column
        positions (an INSERT's columns would be guessed from a table it may have changed)."""
        if hints is not None and id(runner) in self._recheck:
            return hints.without_order()
        return hints

    def settle(self, runner: Any) -> None:
        """If `runner` ran DDL in a transaction that has ended since, rebuild: other
        sessions may have rebuilt the hints before its commit."""
        ended = runner.txn_status == "I" and not runner.implicit
        if ended and id(runner) in self._recheck:
            self._recheck.discard(id(runner))
            self._private.pop(id(runner), None)
            self.invalidate()

    async def private(self, runner: Any) -> ColumnHints | None:
        """The hints as `runner`'s open transaction, which ran DDL, sees the catalog (a
        table it made, with its identity columns), read through its own cursor; built
        again after any DDL (each bumps the version)."""
        version = self._version
        kept = self._private.get(id(runner))
        if kept is not None and kept[0] == version:
            return kept[1]
        await runner.take_cursor()
        hints = await runner.call(_read, runner.cursor)
        if len(self._private) >= 64:  # sessions gone mid-transaction: built again on demand
            self._private.clear()
        self._private[id(runner)] = (version, hints)
        return hints

    def note(self, runner: Any, statements: Sequence[Statement]) -> None:
        """Called with each batch of transpiled statements of a session (`runner`)."""
        self.settle(runner)
        if runner.txn_status == "I" and len(statements) == 1:
            return  # autocommit: ParamTypes.invalidate follows the change itself
        for st in statements:
            if st.kind == "ddl" or (st.kind == "select" and _embeds_column(st.sql)):
                self._recheck.add(id(runner))

    def _build(self) -> ColumnHints | None:
        if self._cursor is None:
            self._cursor = self._engine.cursor()
        return _read(self._cursor)


def _read(cur: Any) -> ColumnHints | None:
    """The hints from the catalog `cur` sees."""
    try:
        rows = cur.execute(_COLUMNS_SQL).fetchall()
        keys = cur.execute(_KEYS_SQL).fetchall()
        unique = cur.execute(_UNIQUE_SQL).fetchall()
        registered: list[tuple[str, str, str]] = []
        if any(r[1] == REGISTRY for r in rows):
            registered = cur.execute(
                f"SELECT table_name, column_name, vector_column FROM {REGISTRY}"
            ).fetchall()
    except Exception as exc:  # hints are an optimisation: without them, the name rule
        log.warning("column hints unavailable: %s", exc)
        return None
    try:
        identity = cur.execute(_IDENTITY_SQL).fetchall()
    except Exception:  # a database without the registry (no wire server made it)
        identity = []
    return build(rows, registered, keys, identity, unique)


def build(
    rows: Iterable[tuple[str, str, str, str]],
    registered: Iterable[tuple[str, str, str]],
    keys: Iterable[tuple[str, str, Sequence[str]]] = (),
    identity: Iterable[tuple[str, str, str, str]] = (),
    unique: Iterable[tuple[str, str, Sequence[str] | None, str]] = (),
) -> ColumnHints:
    """ColumnHints from (schema, table, column, data type) rows, each table's in declared
    order, and the registry's (table, text column, embedding column) rows. A table name
    found in several schemas keeps only what all of them agree on (a query may mean any
    of them)."""
    kinds: dict[str, dict[str, set[str]]] = {}
    sizes: dict[str, dict[str, set[int | None]]] = {}  # FLOAT[n] columns' n
    copies: dict[str, dict[str, list[str]]] = {}  # table -> schema -> its columns, in order
    for schema, table, column, dtype in rows:
        t, c = table.lower(), column.lower()
        kind = (
            VECTOR
            if _VECTOR_TYPE.match(dtype)
            else TEXT
            if dtype == "VARCHAR"
            else JSON
            if dtype == "JSON"
            else DATE
            if dtype == "DATE"
            else BYTEA
            if dtype == "BLOB"
            else TIMESTAMPTZ
            if dtype == "TIMESTAMP WITH TIME ZONE"
            else ARRAY
            if dtype.endswith("]")
            else INT
            if dtype in ("INTEGER", "SMALLINT", "TINYINT")
            else OTHER
        )
        kinds.setdefault(t, {}).setdefault(c, set()).add(kind)
        vector = _VECTOR_TYPE.match(dtype)
        if vector:
            size = int(vector[1]) if vector[1] else None
            sizes.setdefault(t, {}).setdefault(c, set()).add(size)
        copies.setdefault(t, {}).setdefault(schema, []).append(column)
    columns = {
        t: {c: next(iter(k)) for c, k in cols.items() if len(k) == 1} for t, cols in kinds.items()
    }
    embedded: dict[str, dict[str, str]] = {}
    for table, column, vector in registered:
        t, c, v = table.lower(), column.lower(), vector.lower()
        cols = columns.get(t, {})
        in_every_copy = all(
            v in (name.lower() for name in have) for have in copies.get(t, {}).values()
        )
        if cols.get(c) == TEXT and cols.get(v) == VECTOR and in_every_copy:
            embedded.setdefault(t, {})[c] = v
    order = {}
    for t, schemas in copies.items():
        lists = {tuple(c.lower() for c in cols) for cols in schemas.values()}
        if len(lists) == 1:
            order[t] = next(iter(schemas.values()))
    # Primary keys (GROUP BY a key may select the table's other columns): a table name
    # found in several schemas keeps its key only if every copy has the same one.
    per_table: dict[str, list[tuple[str, ...]]] = {}
    for _schema, table, cols in keys:
        per_table.setdefault(table.lower(), []).append(tuple(c.lower() for c in cols))
    primary = {
        t: ks[0]
        for t, ks in per_table.items()
        if len(set(ks)) == 1 and len(ks) == len(copies.get(t, {}))
    }
    # A vector column's size, when every copy of its table declares the same one.
    vector_sizes = {
        t: {c: n for c, ns in cols.items() if len(ns) == 1 and (n := next(iter(ns))) is not None}
        for t, cols in sizes.items()
    }
    # Identity columns (schema, table, column, 'a' | 'd'): a table name found in several
    # schemas keeps them only if every copy has the same.
    per_schema: dict[str, dict[str, dict[str, tuple[str, str]]]] = {}
    for schema, table, column, kind in identity:
        t = table.lower()
        per_schema.setdefault(t, {}).setdefault(schema, {})[column.lower()] = (column, kind)
    identities = {}
    for t, schemas in per_schema.items():
        maps = list(schemas.values())
        if len(maps) == len(copies.get(t, {})) and all(x == maps[0] for x in maps):
            identities[t] = maps[0]
    unique = list(unique)
    keys = [
        (s, t, _index_columns(c[0]) if kind == "index" and c else c)
        for s, t, c, kind in unique
        if kind != "drawn"
    ]
    drawn: dict[str, list[str]] = {}
    for _schema, t, cols, kind in unique:
        if kind == "drawn" and cols and len(copies.get(t.lower(), {})) == 1:
            drawn.setdefault(t.lower(), []).extend(cols)
    return ColumnHints(
        columns,
        embedded,
        order,
        primary,
        vector_sizes,
        identities,
        _unique_keys(keys, copies),
        drawn,
    )


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
_QUOTED = re.compile(r"""^'"((?:[^"]|"")+)"'$""")


def _index_columns(expressions: str) -> list[str] | None:
    """A unique index's keys from duckdb_indexes' text: column names (`[a, b]`,
    `['"Na me"']`) and expressions in parentheses as DuckDB prints them
    (`['(lower(n))']`); None when not read."""
    out = []
    for item in expressions.strip()[1:-1].split(", "):
        if _PLAIN.match(item):
            out.append(item)
        elif quoted := _QUOTED.match(item):
            out.append(quoted[1].replace('""', '"'))
        elif item.startswith("'(") and item.endswith(")'"):
            out.append(item[1:-1].replace("''", "'"))
        else:
            return None
    return out


def _unique_keys(
    rows: Iterable[tuple[str, str, Sequence[str] | None]], copies: dict[str, dict[str, list[str]]]
) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Each table's unique keys, for a table name in one schema whose unique indexes are
    all constraints on columns (None in `rows`: a unique index)."""
    per_schema: dict[str, dict[str, list[tuple[str, ...]] | None]] = {}
    for schema, table, cols in rows:
        known = per_schema.setdefault(table.lower(), {})
        keys = known.setdefault(schema, [])
        if cols is None or keys is None:
            known[schema] = None
        else:
            keys.append(tuple(c if c.startswith("(") else c.lower() for c in cols))
    out = {}
    for t, schemas in per_schema.items():
        keys = next(iter(schemas.values()))
        if len(schemas) == 1 and len(copies.get(t, {})) == 1 and keys:
            out[t] = tuple(keys)
    return out


def _embeds_column(sql: str) -> bool:
    # The substring tests first: is_embed_column_call's regex costs ~0.3 us a SELECT.
    return ("EMBED_COLUMN" in sql or "embed_column" in sql) and is_embed_column_call(sql)


_CACHES: weakref.WeakKeyDictionary[Any, HintsCache] = weakref.WeakKeyDictionary()
_last: tuple[weakref.ref[Any], HintsCache] | None = None  # a server has one engine


def cache_of(engine: Any) -> HintsCache:
    global _last
    last = _last
    if last is not None and last[0]() is engine:
        return last[1]
    cache = _CACHES.get(engine)
    if cache is None:
        cache = _CACHES[engine] = HintsCache(engine)
    _last = (weakref.ref(engine), cache)
    return cache


def wanted(sql: str) -> bool:
    """Can transpiling `sql` depend on hints? Semantic calls, UPDATE (SET of an embedded
    text column clears its vector: transpiler/embedded_writes.py), INSERT (fewer
    values than columns: transpiler/insert_columns.py), GROUP BY (a primary key
    groups its table's other columns: transpiler/group_by_key.py), JSON operators
    (`@>` on a JSON column: transpiler/jsonb_ops.py), array::text
    (transpiler/array_output.py), date - date (transpiler/date_arith.py), sum of an
    integer column (bigint: transpiler/int_results.py), length of a bytea column
    (transpiler/bytea_input.py) and pgvector distances (a parameter
    takes its column's size: transpiler/pgvector.py)."""
    # Substring tests on the lower-cased text: ~0.2 us a statement (a regex takes ~10x).
    low = sql.lower()
    return (
        "update" in low
        or "insert" in low
        or "group" in low
        or "sum" in low  # sum(int) is bigint: transpiler/int_results.py
        or "length(" in low  # length(<bytea column>): transpiler/bytea_input.py
        or "json" in low  # jsonb operators on JSON columns: transpiler/jsonb_ops.py
        or "-" in low  # date - date is an integer: transpiler/date_arith.py
        or "@>" in low
        or "<@" in low
        or "::text" in low  # array::text in PostgreSQL's form: transpiler/array_output.py
        or "as text" in low
        or "as varchar" in low
        or "'{" in low  # ints = '{1,2}': transpiler/array_text.py
        or "semantic_" in low
        or "vector_match" in low
        or "__hati_embed__" in low
        or "<->" in low
        or "<=>" in low
        or "<#>" in low
    )


def for_sql(engine: Any, sql: str) -> ColumnHints | None:
    """The hints to transpile `sql` with (None unless `wanted`), built here if stale.
    Blocks on DuckDB when stale: not for the event loop (see ready / for_session)."""
    return cache_of(engine).current() if wanted(sql) else None


async def ready(runner: Any, sql: str) -> ColumnHints | None:
    """The hints for session `runner` to transpile `sql` with (None unless `wanted`),
    stale ones rebuilt on a worker thread first, so the event loop never waits on DuckDB."""
    if not wanted(sql):
        return None
    cache = cache_of(runner.engine)
    cache.settle(runner)
    if id(runner) in cache._recheck and runner.txn_status != "E":
        return await cache.private(runner)  # its transaction ran DDL: as it sees the tables
    if not cache.fresh:
        await runner.engine.run(cache.current)
    return cache.for_runner(cache.built(), runner)


def for_session(runner: Any, sql: str) -> ColumnHints | None:
    """The hints for `sql` on the event loop, after `ready`: never touches DuckDB."""
    if not wanted(sql):
        return None
    cache = cache_of(runner.engine)
    return cache.for_runner(cache.built(), runner)


def transaction_ended(runner: Any) -> None:
    """A session's COMMIT or ROLLBACK has run; see HintsCache.settle."""
    cache_of(runner.engine).settle(runner)


def note(runner: Any, statements: Sequence[Statement]) -> None:
    """A session (`runner`) transpiled `statements`; see HintsCache.note."""
    cache_of(runner.engine).note(runner, statements)


def catalog_changed(engine: Any) -> None:
    """DDL or hatiproxy_embed_column ran: rebuild the hints before their next use."""
    cache_of(engine).invalidate()
