"""`ALTER TABLE t DROP COLUMN a [, DROP COLUMN b] [CASCADE]` read off the tree: DuckDB 1.5
refuses it when a PRIMARY KEY / UNIQUE / CHECK uses the column, when a key or an index
covers a column after it, or when the table has an index; PostgreSQL drops the column with
the constraints and indexes that use it (the server rebuilds the table:
proxy/pgserver/drop_column.py)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from transpiler.constraint_ddl import alter_tree


@dataclass(frozen=True, slots=True)
class DropColumns:
    schema: str | None
    table: str
    columns: tuple[str, ...]  # as named (unquoted)
    if_exists: bool  # of any of them (DuckDB then skips a missing one)


def dropped_columns(sql: str) -> DropColumns | None:
    """The columns a DuckDB `ALTER TABLE` drops when dropping columns is all it does;
    None for any other statement."""
    tree = alter_tree(sql)
    if tree is None or tree.args.get("exists"):
        return None
    actions = tree.args.get("actions") or []
    columns: list[str] = []
    if_exists = False
    for action in actions:
        if not (isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "COLUMN"):
            return None
        if_exists = if_exists or bool(action.args.get("exists"))
        columns += [c.name for c in action.args.get("tables") or []]
    if not columns:
        return None
    return DropColumns(tree.this.db or None, tree.this.name, tuple(columns), if_exists)
