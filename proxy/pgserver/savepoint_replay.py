"""The DuckDB side of ROLLBACK TO SAVEPOINT: restart the transaction and replay.

Runs on the session's connection thread (`Runner.call`). The checks of
transpiler/replay.py run after the rollback, against the catalog the replay will
really see: the committed one (nothing committed since the transaction began, which
the caller checked) plus the session's TEMP objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

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
        self._defaults: dict[tuple[str | None, str], list[str]] = {}

    def function(self, name: str) -> FunctionInfo | None:
        if self._functions is None:
            self._functions = self._load_functions()
        return self._functions.get(name)

    def _load_functions(self) -> dict[str, FunctionInfo]:
        rows = self.cur.execute(
            "SELECT lower(function_name), function_type, stability, has_side_effects,"
            " macro_definition FROM duckdb_functions()"
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
                    "SELECT schema_name, view_name, sql FROM duckdb_views()"
                ).fetchall()
            ]
        low, sch = name.lower(), schema.lower() if schema else None
        # Any schema's view of that name when unqualified: a base table that shares the
        # name only costs a needless check.
        found = [sql for s, v, sql in self._views if v == low and sch in (None, s)]
        return "\n;\n".join(found) if found else None

    def defaults(self, schema: str | None, table: str) -> Sequence[str]:
        key = (schema.lower() if schema else None, table.lower())
        if key not in self._defaults:
            sql = (
                "SELECT column_default FROM duckdb_columns()"
                " WHERE column_default IS NOT NULL AND lower(table_name) = ?"
            )
            args = [key[1]]
            if key[0] is not None:
                sql += " AND lower(schema_name) = ?"
                args.append(key[0])
            self._defaults[key] = [r[0] for r in self.cur.execute(sql, args).fetchall()]
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
