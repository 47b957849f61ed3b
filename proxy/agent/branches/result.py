"""branch_query results: the last statement's rows as JSON-safe `{"row": {...}}` objects."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import uuid
from typing import Any

import duckdb
from sqlglot import exp

from proxy.core.errors import AgentError

MAX_ROWS = 10_000


def jsonable(value: Any) -> Any:
    """A DuckDB value as a JSON-safe Python value."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(v) for v in value]
    return str(value)


def result_rows(cur: duckdb.DuckDBPyConnection, st: Any, tree: exp.Expr | None) -> list[dict]:
    returning = tree is not None and tree.args.get("returning") is not None
    desc = cur.description
    if st.kind in ("select", "explain") or returning:
        if desc is None:
            return []
        names: list[str] = []
        pg_names = st.column_names or ()
        for i, d in enumerate(desc):
            base = pg_names[i] if i < len(pg_names) and pg_names[i] else d[0]
            candidate, n = base, 1
            while candidate in names:  # duplicate column names would collapse in a dict
                n += 1
                candidate = f"{base}_{n}"
            names.append(candidate)
        fetched = cur.fetchmany(MAX_ROWS + 1)
        if len(fetched) > MAX_ROWS:
            raise AgentError.invalid(
                f"branch_query returns at most {MAX_ROWS} rows", hint="add a LIMIT"
            )
        return [{"row": {k: jsonable(v) for k, v in zip(names, r, strict=True)}} for r in fetched]
    out: dict[str, Any] = {"command": st.tag}
    if desc is not None and len(desc) == 1 and desc[0][0] == "Count":
        row = cur.fetchone()
        if row is not None:
            out["rows_affected"] = int(row[0])
    return [{"row": out}]
