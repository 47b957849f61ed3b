"""INSERT ... ON CONFLICT whose proposed rows share a conflict key.

PostgreSQL refuses a DO UPDATE whose rows share a key (21000, `ON CONFLICT DO UPDATE
command cannot affect row a second time`); rows whose key is NULL never conflict, and
all of them are inserted. DuckDB 1.5 writes the first of the rows that share a key and
drops the others without a word -- also rows whose key is NULL, under DO UPDATE and DO
NOTHING -- so the client would be told its rows were written when some were not. Such a
statement is refused here: 21000 as in PostgreSQL, or 0A000 where PostgreSQL would have
inserted the NULL-keyed rows. The keys of a VALUES list with a column list are read when
each is a literal or a parameter; `refusal` compares them once the parameters' values
are bound. Any other key expression leaves the statement unchecked, as does INSERT ...
SELECT (docs/compatibility.md). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

# One proposed row's key: per conflict column (is a parameter, its number or the value).
Key = tuple[tuple[bool, Any], ...]


@dataclass(frozen=True, slots=True)
class Refusal:
    sqlstate: str
    message: str
    detail: str | None
    hint: str


@dataclass(frozen=True, slots=True)
class Upsert:
    update: bool  # DO UPDATE (else DO NOTHING)
    rows: tuple[Key, ...]


def keys(tree: exp.Expr) -> Upsert | None:
    """The conflict keys of an upsert's VALUES rows, or None when there is nothing to check."""
    conflict = tree.args.get("conflict") if isinstance(tree, exp.Insert) else None
    if conflict is None:
        return None
    source, target = tree.expression, tree.this
    if not isinstance(source, exp.Values) or len(source.expressions) < 2:
        return None
    if not isinstance(target, exp.Schema):  # no column list: positions unknown here
        return None
    columns = [c.name.lower() for c in target.expressions]
    positions = []
    for key in conflict.args.get("conflict_keys") or []:
        column = key.this if isinstance(key, exp.Ordered) else key
        if not isinstance(column, exp.Column) or column.name.lower() not in columns:
            return None
        positions.append(columns.index(column.name.lower()))
    rows = []
    for row in source.expressions:
        if not isinstance(row, exp.Tuple) or len(row.expressions) != len(columns) or not positions:
            return None
        key = tuple(_key(row.expressions[i]) for i in positions)
        if any(k is None for k in key):
            return None
        rows.append(key)
    update = "UPDATE" in conflict.text("action").upper()
    return Upsert(update, tuple(rows))  # type: ignore[arg-type]  # (no None left)


def _key(node: exp.Expr) -> tuple[bool, Any] | None:
    while isinstance(node, exp.Cast | exp.Paren):
        node = node.this
    if isinstance(node, exp.Parameter) and node.this is not None and node.this.name.isdigit():
        return True, int(node.this.name)
    if isinstance(node, exp.Null):
        return False, None
    if isinstance(node, exp.Boolean):
        return False, bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return False, node.this
        try:
            return False, Decimal(node.this)
        except InvalidOperation:
            return None
    return None


def refusal(upsert: Upsert, params: Sequence[Any]) -> Refusal | None:
    """The error for rows that share a key (see above), or None."""
    seen = set()
    for row in upsert.rows:
        values = tuple(
            (params[v - 1] if v - 1 < len(params) else None) if is_param else v
            for is_param, v in row
        )
        try:
            if values not in seen:
                seen.add(values)
                continue
        except TypeError:  # an unhashable parameter value: not compared
            return None
        if any(v is None for v in values):
            return Refusal(
                "0A000",
                "INSERT ... ON CONFLICT with several rows whose conflict key is NULL is not "
                "supported",
                "DuckDB would keep only the first of them.",
                "Insert the rows whose key is NULL in statements of their own.",
            )
        if upsert.update:
            return Refusal(
                "21000",
                "ON CONFLICT DO UPDATE command cannot affect row a second time",
                None,
                "Ensure that no rows proposed for insertion within the same command have "
                "duplicate constrained values.",
            )
    return None
