"""Bind parameters: inferring unknown types (OID 0) and decoding values.

Drivers such as asyncpg parse with every parameter type unspecified and then
encode their arguments according to our ParameterDescription, so the types we
infer decide whether `conn.fetch("... WHERE id = $1", 5)` works at all.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import duckdb

from proxy.pgserver import column_origins
from proxy.semantic import column_hints
from proxy.wire import enum_oids
from proxy.wire.errors import PgError
from proxy.wire.types import ParamDecodeError, oid_for_duckdb_type_name, param_decoder
from transpiler import Statement

TEXT_OID = 25


class ParamTypes:
    """Infers parameter OIDs from the statement and the catalog (column types)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._columns: dict[tuple[str | None, str], list[tuple[str, str]] | None] = {}

    def invalidate(self) -> None:
        """The catalog changed (the runner calls this after DDL and embed_column)."""
        with self._lock:
            self._columns.clear()
        column_hints.catalog_changed(self._engine)
        enum_oids.clear()  # a type dropped or made again: RowDescription reads anew
        column_origins.catalog_changed()  # a table dropped or made again: its oid too

    def _table_columns(
        self, cursor: Any, schema: str | None, table: str
    ) -> list[tuple[str, str]] | None:
        key = (schema, table.lower())
        with self._lock:
            if key in self._columns:
                return self._columns[key]
        query = (
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE lower(table_name) = lower(?) AND (? IS NULL OR table_schema = ?) "
            "ORDER BY ordinal_position"
        )
        s = "main" if schema == "public" else schema
        try:
            rows = cursor.execute(query, [table, s, s]).fetchall()
        except duckdb.Error:
            return None  # e.g. the session's transaction is aborted: infer nothing
        cols = [(r[0], r[1]) for r in rows] or None
        with self._lock:
            self._columns[key] = cols
        return cols

    async def infer(
        self,
        st: Statement,
        oids: list[int],
        call: Callable[..., Awaitable[Any]],
        session_cursor: Any = None,
    ) -> list[int]:
        """OIDs for `oids`, zeros replaced by inferred types (text when unknown).

        `session_cursor`, when given, is the session's own DuckDB cursor: only it sees
        the session's TEMP tables and tables created in its open transaction.
        """
        try:
            from transpiler import infer_param_types
        except ImportError:
            return [o or TEXT_OID for o in oids]
        cursor = session_cursor if session_cursor is not None else self._engine.cursor()

        def column_type(schema: str | None, table: str, column: str) -> str | None:
            for name, dtype in self._table_columns(cursor, schema, table) or ():
                if name.lower() == column.lower():
                    return dtype
            return None

        def table_columns(schema: str | None, table: str) -> list[tuple[str, str]] | None:
            return self._table_columns(cursor, schema, table)

        def run() -> dict[int, str]:
            try:
                return infer_param_types(st, column_type, table_columns)
            finally:
                if cursor is not session_cursor:
                    cursor.close()

        inferred = await call(run)
        if st.agent_calls:
            from proxy.execution.sql_bridge import param_oids

            # The SQL DuckDB sees numbers its $n anew; agent arguments type themselves.
            kept = st.duckdb_params or ()
            inferred = {kept[k - 1]: v for k, v in inferred.items() if 0 < k <= len(kept)}
            agent_oids = param_oids(st)
        else:
            agent_oids = {}
        out = []
        for i, oid in enumerate(oids, start=1):
            if oid:
                out.append(oid)
            elif i in agent_oids:
                out.append(agent_oids[i])
            elif i in inferred:
                out.append(oid_for_duckdb_type_name(inferred[i]) or TEXT_OID)
            else:
                out.append(TEXT_OID)
        return out


_PLACEHOLDERS: dict[int, Any] = {
    16: False,
    # DuckDB types a Python int by its size: one past int4's range binds as BIGINT
    20: 2**40,
    21: 0,
    23: 0,
    26: 0,
    700: 0.0,
    701: 0.0,
    1700: __import__("decimal").Decimal("0.1"),
    17: b"",
    # Text: DuckDB types a NULL `$1` as INTEGER, which Execute would then contradict.
    19: "",
    25: "",
    1042: "",
    1043: "",
    2950: __import__("uuid").UUID(int=0),
}


def placeholder_value(oid: int) -> Any:
    """A value of the parameter's type for describing a statement without running it."""
    return _PLACEHOLDERS.get(oid)


def decode_params(
    oids: Sequence[int],
    formats: Sequence[int],
    values: Sequence[bytes | None],
    tz: str | None = None,
    portal: str = "",
) -> list[Any]:
    out: list[Any] = []
    for i, raw in enumerate(values):
        if raw is None:
            out.append(None)
            continue
        fmt = (formats[0] if len(formats) == 1 else formats[i]) if formats else 0
        try:
            out.append(param_decoder(oids[i] if i < len(oids) else 0, fmt, tz)(raw))
        except ParamDecodeError as exc:
            # Postgres names the parameter in the error's context (CONTEXT: in psql).
            where = f'portal "{portal}"' if portal else "unnamed portal"
            raise PgError(exc.sqlstate, str(exc), where=f"{where} parameter ${i + 1}") from None
    return out
