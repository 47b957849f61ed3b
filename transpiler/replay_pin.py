"""Serial values made explicit in a recorded INSERT, so ROLLBACK TO SAVEPOINT can replay it.

DuckDB sequences are not transactional: replaying `INSERT INTO t (name) VALUES ('a')`
into a table whose id is `DEFAULT nextval('s')` would draw a new id, not the one the
client was given, so the replay refuses it (transpiler/replay.py). The server reads, at
SAVEPOINT, the ids the transaction's rows really got
(proxy/pgserver/savepoint_replay.pin_serials) and the record becomes
`INSERT INTO t (name, id) VALUES ('a', 1)`: the replay then gives the same rows.
Only `INSERT ... (columns) VALUES (...)` without ON CONFLICT is pinned.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError


@dataclass(frozen=True, slots=True)
class InsertShape:
    schema: str | None
    table: str
    columns: tuple[str, ...]  # as listed (lower case)
    rows: int  # VALUES rows; 0: not a VALUES insert (never pinned)


def shape(sql: str) -> InsertShape | None:
    """The target and listed columns of a DuckDB INSERT; None for anything else."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except SqlglotError:
        return None
    if not isinstance(tree, exp.Insert) or not isinstance(tree.this, exp.Schema):
        return None
    table = tree.this.this
    if not isinstance(table, exp.Table) or not table.name:
        return None
    values = tree.expression
    plain = isinstance(values, exp.Values) and not tree.args.get("conflict")
    return InsertShape(
        schema=table.db or None,
        table=table.name,
        columns=tuple(c.name.lower() for c in tree.this.expressions),
        rows=len(values.expressions) if plain else 0,
    )


def pin(sql: str, columns: list[str], values: list[tuple[int, ...]]) -> str | None:
    """`sql` (an INSERT ... VALUES of len(values) rows) with `columns` added, row i
    getting values[i]; None when it is not of that form."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except SqlglotError:
        return None
    if not isinstance(tree, exp.Insert) or not isinstance(tree.this, exp.Schema):
        return None
    rows = tree.expression
    if not isinstance(rows, exp.Values) or len(rows.expressions) != len(values):
        return None
    for column in columns:
        tree.this.append("expressions", exp.to_identifier(column, quoted=True))
    for row, extra in zip(rows.expressions, values, strict=True):
        if not isinstance(row, exp.Tuple):
            return None
        for value in extra:
            row.append("expressions", exp.Literal.number(value))
    return tree.sql(dialect="duckdb")
