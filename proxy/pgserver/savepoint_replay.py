"""The DuckDB side of ROLLBACK TO SAVEPOINT: restart the transaction and replay.

Runs on the session's connection thread (`Runner.call`). The checks of
transpiler/replay.py run after the rollback, against the catalog the replay will
really see: the committed one (nothing committed since the transaction began, which
the caller checked) plus the session's TEMP objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from transpiler import replay_pin
from transpiler.replay import FunctionInfo, replay_refusal

if TYPE_CHECKING:
    import duckdb

    from proxy.pgserver.savepoint_log import Record

_EXCERPT = 60


class DuckDBCatalog:
    """transpiler.replay.Catalog over a DuckDB cursor; each table is read once, lazily."""

    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self.cur = cur
        self._functions: dict[str, FunctionInfo] | None = None
        self._views: list[tuple[str, str, str]] | None = None
        self._defaults: dict[tuple[str | None, str], list[tuple[str, str]]] = {}

    def function(self, name: str) -> FunctionInfo | None:
        if self._functions is None:
            self._functions = self._load_functions()
        return self._functions.get(name)

    def _load_functions(self) -> dict[str, FunctionInfo]:
        rows = self.cur.execute(
            "SELECT lower(function_name), function_type, stability, has_side_effects,"
            " macro_definition FROM system.main.duckdb_functions()"
        ).fetchall()
        kinds: dict[str, set[str]] = {}
        volatile: set[str] = set()
        bodies: dict[str, list[str]] = {}
        for name, kind, stability, side_effects, body in rows:
            kinds.setdefault(name, set()).add(kind)
            if side_effects or stability in ("VOLATILE", "CONSISTENT_WITHIN_QUERY"):
                volatile.add(name)
            if body:
                bodies.setdefault(name, []).append(body)
        return {
            name: FunctionInfo(frozenset(k), name in volatile, tuple(bodies.get(name, ())))
            for name, k in kinds.items()
        }

    def view(self, schema: str | None, name: str) -> str | None:
        if self._views is None:
            self._views = [
                (s.lower(), v.lower(), sql)
                for s, v, sql in self.cur.execute(
                    "SELECT schema_name, view_name, sql FROM system.main.duckdb_views()"
                ).fetchall()
            ]
        low, sch = name.lower(), schema.lower() if schema else None
        # Any schema's view of that name when unqualified: a base table that shares the
        # name only costs a needless check.
        found = [sql for s, v, sql in self._views if v == low and sch in (None, s)]
        return "\n;\n".join(found) if found else None

    def defaults(self, schema: str | None, table: str) -> Sequence[tuple[str, str]]:
        key = (schema.lower() if schema else None, table.lower())
        if key not in self._defaults:
            sql = (
                "SELECT column_name, column_default FROM system.main.duckdb_columns()"
                " WHERE column_default IS NOT NULL AND lower(table_name) = ?"
            )
            args = [key[1]]
            if key[0] is not None:
                sql += " AND lower(schema_name) = ?"
                args.append(key[0])
            self._defaults[key] = [(r[0], r[1]) for r in self.cur.execute(sql, args).fetchall()]
        return self._defaults[key]


def restore(cur: duckdb.DuckDBPyConnection, records: Sequence[Record]) -> str | None:
    """Roll back, begin, and replay `records` in order.

    Returns None when done, or why a replay would not be exact; then nothing was
    replayed and the new transaction is empty (the caller fails the block).
    """
    cur.rollback()
    cur.begin()
    if not records:
        return None
    catalog = DuckDBCatalog(cur)
    for n, rec in enumerate(records, start=1):
        if rec.safe:
            continue
        why = replay_refusal(rec.sql, catalog)
        if why:
            return f"write {n} of the transaction ({_excerpt(rec.sql)}) uses {why}"
        rec.safe = True
    for rec in records:
        cur.execute(rec.sql, rec.params) if rec.params else cur.execute(rec.sql)
    return None


def _excerpt(sql: str) -> str:
    flat = " ".join(sql.split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 3] + "..."


# DuckDB numbers a transaction's own new rows from here (MAX_ROW_ID), in insertion order.
_LOCAL_ROWIDS = 36028797018960000


def pin_serials(cur: duckdb.DuckDBPyConnection, records: Sequence[Record]) -> None:
    """At SAVEPOINT: give the transaction's recorded INSERTs the serial ids their rows
    got, so a replay after ROLLBACK TO draws none (replay_pin.py). A table is pinned only
    when its new rows in this transaction, in insertion order, are exactly the rows the
    recorded INSERTs wrote (nothing deleted, no UPDATE that moved a row)."""
    by_table: dict[tuple[str | None, str], list[tuple[Record, replay_pin.InsertShape]]] = {}
    for rec in records:
        if rec.rows is None:
            continue
        found = replay_pin.shape(rec.sql)
        if found is not None:
            key = (found.schema.lower() if found.schema else None, found.table.lower())
            by_table.setdefault(key, []).append((rec, found))
    catalog = DuckDBCatalog(cur)
    for (schema, table), inserts in by_table.items():
        if all(rec.pinned for rec, _ in inserts):
            continue
        serial = [c for c, d in catalog.defaults(schema, table) if d.startswith("nextval(")]
        if not serial:
            continue
        where = "lower(table_name) = ?" + (" AND lower(schema_name) = ?" if schema else "")
        args = [table] + ([schema] if schema else [])
        names = cur.execute(
            f"SELECT schema_name, table_name FROM system.main.duckdb_tables() WHERE {where}", args
        ).fetchall()
        if len(names) != 1:
            continue  # gone, or several schemas hold the name: not pinned
        qualified = (
            '"' + names[0][0].replace('"', '""') + '"."' + names[0][1].replace('"', '""') + '"'
        )
        cols = ", ".join('"' + c.replace('"', '""') + '"' for c in serial)
        local = cur.execute(
            f"SELECT {cols} FROM {qualified} WHERE rowid >= {_LOCAL_ROWIDS} ORDER BY rowid"
        ).fetchall()
        if sum(rec.rows or 0 for rec, _ in inserts) != len(local):
            continue
        at = 0
        for rec, found in inserts:
            rows = local[at : at + (rec.rows or 0)]
            at += rec.rows or 0
            missing = [c for c in serial if c.lower() not in found.columns]
            if rec.pinned or not missing or found.rows != len(rows):
                continue
            index = [serial.index(c) for c in missing]
            pinned = replay_pin.pin(rec.sql, missing, [tuple(r[i] for i in index) for r in rows])
            if pinned is not None:
                rec.sql, rec.pinned, rec.safe = pinned, True, False
