"""What the wire's extended protocol keeps between messages: prepared statements and
portals (a statement bound to its parameters, possibly part-way through its rows)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from proxy.pgserver.results import Column
from transpiler import Statement


@dataclass
class Prepared:
    sql: str
    statement: Statement | None  # None: empty query
    param_oids: list[int]
    columns: tuple | None = None  # cached result columns from Describe
    described: bool = False
    # a several-action ALTER TABLE's actions before `statement` (alter_parts.py)
    before: tuple[Statement, ...] = ()


@dataclass
class Portal:
    statement: Statement | None
    params: list[Any]
    result_formats: tuple[int, ...]
    sql: str = ""
    prepared: Prepared | None = None
    columns: tuple[Column, ...] | None = None
    executed: bool = False  # DuckDB ran it; rows are pending in `buffered`, then the cursor
    buffered: list[tuple] | None = None  # rows fetched ahead, sent before the cursor's rest
    arrow: Any = None  # arrow_results.ArrowResult: the rest of the rows, as Arrow batches
    drained: bool = False  # the cursor holds no more rows for this portal
    done: bool = False
    rows_sent: int = 0
    count: int | None = None  # DML row count reported in the tag
    local_rows: list[tuple[str, ...]] | None = field(default=None, repr=False)
    logged: bool = False  # its first Execute was seen by log_statement (statement_log.py)
    # A DML CTE's step (dml_ctes.py): its rows go to this temp table, not the client.
    keep_rows: str | None = None
    kept: Any = None  # ... and the rows, as an Arrow table (read with the statement)
    busy_s: float = 0.0  # time spent running it so far (Describe may start it, Execute resumes)
