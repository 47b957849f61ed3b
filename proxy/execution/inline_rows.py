"""An agent call's few result rows as a view over SQL literals, instead of a registered
Arrow table.

Why: DuckDB scanning a registered Python object (Arrow, pandas) costs ~1 ms per query
however small it is (binding the replacement scan back in Python), against ~0.5 ms to
bind a view over VALUES. Most agent calls answer one row (whoami, store_memory,
append_event), so that scan was the largest part of an agent call over the wire beyond
a point SELECT (bench/agent_calls.py). Larger results, and columns whose values have no
plain literal here (lists), keep the Arrow path.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from proxy.core.sqltext import quote_literal

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

MAX_ROWS = 16  # past this, parsing the literals costs more than the Arrow scan
MAX_CHARS = 64_000  # a long text (a memory's content) stays in Arrow
_SCALAR = {"VARCHAR", "JSON", "UUID", "BIGINT", "INTEGER", "DOUBLE", "FLOAT", "BOOLEAN"}
_SCALAR |= {"TIMESTAMPTZ", "TIMESTAMP"}


def _literal(value: Any) -> str | None:
    """A SQL literal for one cell (cast to its column's type by the view); None: none."""
    if value is None:
        return "NULL"
    kind = type(value)
    if kind is str:  # the common cells first, by exact type (search results: ~100 a call)
        return None if "\x00" in value else "'" + value.replace("'", "''") + "'"
    if kind is int:
        return str(value)
    if kind is float and math.isfinite(value):
        return repr(value)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else quote_literal(repr(value))
    if isinstance(value, str):
        return None if "\x00" in value else quote_literal(value)
    if isinstance(value, dt.datetime):
        return quote_literal(value.isoformat())
    return None


def view_sql(name: str, table: pa.Table, columns: Sequence[tuple[str, str]]) -> str | None:
    """CREATE OR REPLACE TEMP VIEW `name` over the table's rows as literals, typed as
    `columns` says; None when the rows are better registered as Arrow."""
    if table.num_rows > MAX_ROWS or any(typ not in _SCALAR for _, typ in columns):
        return None
    names = [col for col, _ in columns]
    if table.column_names != names:
        return None
    rows = []
    size = 0
    separators = 2 * (len(names) - 1)
    for row in table.to_pylist():
        cells = [_literal(row[col]) for col in names]
        if None in cells:
            return None
        text = ", ".join(cells)  # type: ignore[arg-type]
        size += len(text) - separators  # the cells' own length
        if size > MAX_CHARS:
            return None
        rows.append("(" + text + ")")
    cols = ", ".join(f'CAST(c{i} AS {typ}) AS "{col}"' for i, (col, typ) in enumerate(columns))
    if not rows:
        nulls = ", ".join(f'CAST(NULL AS {typ}) AS "{col}"' for col, typ in columns)
        return f'CREATE OR REPLACE TEMP VIEW "{name}" AS SELECT {nulls} LIMIT 0'
    aliases = ", ".join(f"c{i}" for i in range(len(columns)))
    return (
        f'CREATE OR REPLACE TEMP VIEW "{name}" AS SELECT {cols}'
        f" FROM (VALUES {', '.join(rows)}) v({aliases})"
    )


def show(
    cur: duckdb.DuckDBPyConnection, name: str, table: pa.Table, columns: Sequence[tuple[str, str]]
) -> bool:
    """Make `name` the rows of `table` as a literal view; False if they were not."""
    sql = view_sql(name, table, columns)
    if sql is None:
        return False
    cur.execute(sql)
    return True
