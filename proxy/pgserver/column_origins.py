"""RowDescription's table oid and column number, as PostgreSQL sends them.

For a result column that is a plain reference to a table's or view's column, PostgreSQL
sends that relation's pg_class oid and the column's pg_attribute.attnum; drivers read the
catalog with them (psqlODBC's nullability and base names, pgJDBC's getTableName /
isNullable, psycopg's table_oid). transpiler/column_origins.py says which relation as
written each column reads; this module maps that to the oids pg_class / pg_attribute
report (DuckDB's table_oid and column_index: proxy/db/catalog/30_relations.sql).

Cost: the catalog is read once per relation and per catalog change (DDL bumps
`catalog_changed`, and so does the end of a block that ran DDL, as in column_hints: other
sessions may have read the old relation before its COMMIT); a statement's answer is kept
per connection by its SQL text, so a repeated statement (a prepared point SELECT) pays a
dict lookup and a tuple comparison.

A VARCHAR result column read plainly from a varchar(n) column is described as PostgreSQL
does, varchar (1043) with typmod n + 4 (its values are the same bytes as text's, in text
and binary format); the lengths are read with the relation, from the same CHECKs
pg_attribute reads them from.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

import duckdb

from proxy.core.names import PG_SCHEMA
from proxy.db.catalog.snapshot import SNAPSHOT_VIEWS
from proxy.pgserver.results import Column
from proxy.pgserver.search_path import search_path_order
from transpiler import Statement
from transpiler.column_origins import ColumnOrigin, Relation


class _BlockState(Protocol):
    txn_status: str
    implicit: bool


log = logging.getLogger("hatiproxy.column_origins")

Pairs = tuple[tuple[int, int], ...]  # (table oid, attnum) per result column; (0, 0): none
# A relation's oid and its columns (lower-case name -> attnum), or None: not found.
Found = tuple[int, dict[str, int], int] | None  # (oid, columns, column count)

_generation = 0
_gen_lock = threading.Lock()
_MAX_STATEMENTS = 1024
_NOT_USERS = ("pg_catalog", "information_schema")
_NOT_DATABASES = ("temp", "system", "__hati_catalog")
VARCHAR_OID, BPCHAR_OID = 1043, 1042
_ROW_KINDS = frozenset({"select", "insert", "update", "delete"})  # DML: its RETURNING


def catalog_changed() -> None:
    """DDL ran somewhere: every connection reads relations anew."""
    global _generation
    with _gen_lock:
        _generation += 1


class OriginMap:
    """One connection's answers (temp tables are its own)."""

    def __init__(self) -> None:
        self._gen = -1
        self._path: str | None = None
        self._relations: dict[Relation, Found] = {}
        # (table oid, attnum) -> (type oid, typmod) of the varchar(n) columns read
        self._declared: dict[tuple[int, int], tuple[int, int]] = {}
        self._statements: dict[str, Pairs | None] = {}
        self._ddl_in_block = False
        self._last: dict[str, tuple[tuple[Column, ...], tuple[Column, ...]]] = {}

    def note(self, runner: _BlockState, statements: Sequence[Statement]) -> None:
        """Each batch a session transpiles: DDL in a block others may have resolved
        before its COMMIT (or after its ROLLBACK) is read anew when the block has ended."""
        ended = runner.txn_status == "I" and not runner.implicit
        if ended and self._ddl_in_block:
            self._ddl_in_block = False
            catalog_changed()
        if not (runner.txn_status == "I" and len(statements) == 1):
            self._ddl_in_block |= any(st.kind == "ddl" for st in statements)
        if self._ddl_in_block and any(st.kind in ("commit", "rollback") for st in statements):
            catalog_changed()  # now too: others' next statements need not wait for ours

    def prepare(
        self, cur: duckdb.DuckDBPyConnection, st: Statement, path: str | None
    ) -> Pairs | None:
        """The statement's pairs; reads the catalog on `cur`, so call it while the
        cursor holds no pending result (on the worker thread). path: the session's
        search_path (unqualified names resolve along it)."""
        if st.column_origins is None or st.kind not in _ROW_KINDS:
            return None
        if self._gen != _generation or path != self._path:
            self._gen, self._path = _generation, path
            self._relations.clear()
            self._declared.clear()
            self._statements.clear()
            self._last.clear()
        if st.sql in self._statements:
            return self._statements[st.sql]
        origins = st.column_origins
        pairs = None if origins is None else self._resolve(cur, origins)
        if len(self._statements) >= _MAX_STATEMENTS:
            self._statements.clear()
            self._last.clear()
        self._statements[st.sql] = pairs
        return pairs

    def apply(
        self, st: Statement, cols: tuple[Column, ...] | None, pairs: Pairs | None
    ) -> tuple[Column, ...] | None:
        """`cols` with their origins (unchanged when the counts do not match)."""
        if cols is None or pairs is None or len(pairs) != len(cols):
            return cols
        last = self._last.get(st.sql)
        if last is not None and (last[0] is cols or last[0] == cols):
            return last[1]
        out = tuple(
            c
            if oid == 0
            else replace(c, table_oid=oid, attnum=num, declared=self._typed(c, oid, num))
            for c, (oid, num) in zip(cols, pairs, strict=True)
        )
        self._last[st.sql] = (cols, out)
        return out

    def padded(self, pairs: Pairs | None) -> bool:
        """Whether a result column reads a char(n) column (its values are padded)."""
        return pairs is not None and any(
            self._declared.get(p, (0, 0))[0] == BPCHAR_OID for p in pairs if p[0]
        )

    def _typed(self, c: Column, oid: int, num: int) -> tuple[int, int] | None:
        """The declared (type oid, typmod) DuckDB's type lost, for a VARCHAR column that
        reads a varchar(n) one as it is (a cast or an expression is text: no origin)."""
        return self._declared.get((oid, num)) if c.duckdb_type == "VARCHAR" else None

    def _resolve(
        self, cur: duckdb.DuckDBPyConnection, origins: tuple[ColumnOrigin | None, ...]
    ) -> Pairs | None:
        wanted = {r for o in origins if o is not None for r in o.candidates}
        missing = [r for r in wanted if r not in self._relations]
        if missing:
            try:
                self._read(cur, missing)
            except duckdb.Error as exc:  # an aborted transaction, say: no origins
                log.debug("column origins unreadable: %s", exc)
                return None
        out: list[tuple[int, int]] = []
        for o in origins:
            if o is None:
                out.append((0, 0))
            elif o.column is None:  # a star: every column of the relation, in order
                found = self._relations.get(o.candidates[0])
                if found is None:
                    return None  # its width is unknown: no column can be placed
                out.extend((found[0], i) for i in range(1, found[2] + 1))
            else:
                out.append(self._column(o))
        return tuple(out)

    def _column(self, o: ColumnOrigin) -> tuple[int, int]:
        name = (o.column or "").lower()
        hits = []
        for rel in o.candidates:
            found = self._relations.get(rel)
            if found is not None and name in found[1]:
                hits.append((found[0], found[1][name]))
        return hits[0] if len(hits) == 1 else (0, 0)  # ambiguous: DuckDB would refuse it

    def _read(self, cur: duckdb.DuckDBPyConnection, missing: list[Relation]) -> None:
        names = sorted({r.name.lower() for r in missing})
        marks = ", ".join("?" * len(names))
        rows = cur.execute(
            "SELECT database_name, schema_name, table_name, table_oid, column_name, "
            "column_index FROM system.main.duckdb_columns() "
            f"WHERE lower(table_name) IN ({marks})",
            names,
        ).fetchall()
        current, path = cur.execute(
            "SELECT system.main.current_database(), current_setting('search_path')"
        ).fetchone() or ("", "")
        order = search_path_order(path, current)
        by_rel: dict[tuple[str, str, str], tuple[int, dict[str, int]]] = {}
        for db, schema, table, oid, col, index in rows:
            entry = by_rel.setdefault((db.lower(), schema.lower(), table.lower()), (int(oid), {}))
            entry[1][col.lower()] = int(index)
        for rel in missing:
            self._relations[rel] = _pick(rel, by_rel, current, order)
        oids = sorted({f[0] for r in missing if (f := self._relations[r]) is not None})
        if oids:
            self._declared.update(_varchar_lengths(cur, oids))


def _varchar_lengths(
    cur: duckdb.DuckDBPyConnection, oids: list[int]
) -> dict[tuple[int, int], tuple[int, int]]:
    """(table oid, attnum) -> (type oid, typmod) of those tables' varchar(n) (1043, n + 4),
    unsized varchar (1043, -1) and char(n) (1042, n + 4) columns, read from their CHECKs as
    pg_attribute reads them (30_relations.sql __hati_char_cols)."""
    rows = cur.execute(
        f"SELECT table_oid, attnum, typid, typmod FROM {PG_SCHEMA}.__hati_char_cols "
        f"WHERE table_oid IN ({', '.join('?' * len(oids))})",
        oids,
    ).fetchall()
    return {(int(o), int(a)): (int(t), int(m)) for o, a, t, m in rows}


def _pick(
    rel: Relation,
    by_rel: dict[tuple[str, str, str], tuple[int, dict[str, int]]],
    current: str,
    order: list[tuple[str, str]],
) -> Found:
    """The relation a name means, as DuckDB resolves it (alter_rebuild.resolve_table):
    as qualified, else a temp table, else the first on the search_path."""
    name = rel.name.lower()
    schema = (rel.schema or "").lower()
    if schema in _NOT_USERS or name.startswith("_hatidata_"):
        return None  # the catalog's own relations and agent relations: left at 0
    if schema == "public":
        schema = "main"
    if rel.catalog is not None:
        keys = [(rel.catalog, schema or "main")]
    elif schema:
        keys = [(current, schema), (schema, "main")]
    else:
        keys = [] if name in SNAPSHOT_VIEWS else [("temp", "main")]
        keys += order
    for db, sch in keys:
        if db.lower() in _NOT_DATABASES and db != "temp":
            continue
        found = by_rel.get((db.lower(), sch.lower(), name))
        if found is not None:
            return found[0], found[1], len(found[1])
    return None
