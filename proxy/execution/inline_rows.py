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
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from proxy.core.sqltext import quote_literal

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

# Past this, binding the literals (or the parameters of `with_rows`) costs more than
# registering Arrow rows: a search's 10 rows of 19 columns cost ~0.7x the CPU time as
# Arrow, and search_memory p50 went 1.10x -> 0.93x a5bd59d's in one A/B at 3 vs 16 rows.
MAX_ROWS = 3
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


_WITH = re.compile(r"WITH\s+(RECURSIVE\s+)?", re.IGNORECASE)


class Cells:
    """An agent call's few scalar rows as Python cells, for `with_rows` (no Arrow table:
    building one and reading it back cost ~0.3 ms of a one-row call)."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows = rows


def fits(columns: Sequence[tuple[str, str]], count: int, most: int = MAX_ROWS) -> bool:
    """Whether an agent call's result can go into the statement as parameters (or, up to
    `most` rows, be the statement's result: pgserver/call_shortcut.py)."""
    return count <= most and all(typ in _SCALAR for _, typ in columns)


def can_prefix(sql: str) -> bool:
    """Whether `with_rows` can put CTEs in front of this statement."""
    text = sql.lstrip()
    return text[:6].upper() == "SELECT" or _WITH.match(text) is not None


def _cte(name: str, count: int, columns: Sequence[tuple[str, str]], at: int) -> str:
    """`name AS (...)` over parameters $at.. (`count` rows' cells, row by row)."""
    quoted = ['"' + col.replace('"', '""') + '"' for col, _ in columns]
    typed = list(zip(columns, quoted, strict=True))
    if not count:
        nulls = ", ".join(f"CAST(NULL AS {typ}) AS {q}" for (_, typ), q in typed)
        return f"{name} AS (SELECT {nulls} LIMIT 0)"
    if count == 1:
        cells = (f"CAST(${at + i} AS {typ}) AS {q}" for i, ((_, typ), q) in enumerate(typed))
        return f"{name} AS (SELECT {', '.join(cells)})"
    width = len(columns)
    values = (
        "("
        + ", ".join(f"CAST(${at + r * width + i} AS {typ})" for i, (_, typ) in enumerate(columns))
        + ")"
        for r in range(count)
    )
    return f"{name} AS (SELECT * FROM (VALUES {', '.join(values)}) v({', '.join(quoted)}))"


def with_rows(
    sql: str, params: list[Any], relations: Sequence[Any], calls: set[str]
) -> tuple[str, list[Any], list[Any]]:
    """A SELECT's agent calls (relation names `calls`) with a few scalar rows become CTEs
    of the statement itself, their cells parameters after the statement's own; the
    relations left to register. Every `Cells` relation goes in (`can_prefix(sql)` holds).
    Why: registering them costs a DDL statement (the view) before the query, and
    DuckDB's next query after a DDL costs several times more: a store_memory or
    append_event over the wire paid ~3 ms there against a point SELECT's ~0.7 ms
    (bench/agent_calls.py)."""
    text = sql.lstrip()
    head = _WITH.match(text)
    ctes: list[str] = []
    rest: list[Any] = []
    out = list(params)
    for relation in relations:
        name, table, columns = relation
        if isinstance(table, Cells):
            rows = table.rows
        elif (
            name in calls
            and table is not None
            and fits(columns, table.num_rows)
            and table.column_names == [col for col, _ in columns]
        ):
            rows = [[row[col] for col, _ in columns] for row in table.to_pylist()]
        else:
            rest.append(relation)
            continue
        ctes.append(_cte(name, len(rows), columns, len(out) + 1))
        for row in rows:
            out += row
    if not ctes:
        return sql, params, rest
    if head is not None:
        return text[: head.end()] + ", ".join(ctes) + ", " + text[head.end() :], out, rest
    return "WITH " + ", ".join(ctes) + " " + text, out, rest
