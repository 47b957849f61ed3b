"""ALTER TABLE ... ALTER COLUMN ... TYPE: which columns get which type, for a rebuild.

DuckDB 1.5 cannot change a column's type in place when the column has a CHECK (a
varchar(n) length is one: transpiler/varchar_length.py), PRIMARY KEY or UNIQUE
constraint, when the table has an index, or for more than one clause per statement;
and it forgets the n of a new varchar(n). proxy/pgserver/alter_rebuild.py then rebuilds the
table. This module reads the request off the transpiled tree of
`ALTER TABLE [IF EXISTS] [ONLY] t ALTER [COLUMN] c [SET DATA] TYPE type [COLLATE x]
[USING expr] [, ...]`, which may also carry `ALTER [COLUMN] c SET/DROP DEFAULT` and
`SET/DROP NOT NULL` clauses (Rails' change_column sends them together).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from transpiler.dialects import generator
from transpiler.varchar_length import declared_length


@dataclass(frozen=True, slots=True)
class TypeChange:
    """One `ALTER COLUMN c TYPE ...` clause, as DuckDB SQL."""

    column: str  # the name as written (DuckDB matches names case-insensitively)
    type_sql: str  # VARCHAR for varchar(n): the length goes into a CHECK
    length: int | None  # n of varchar(n) / character varying(n)
    using: str | None  # the USING expression; None: the column itself is cast
    collate: str | None


@dataclass(frozen=True, slots=True)
class AlterColumnTypes:
    """An ALTER TABLE made of ALTER COLUMN TYPE clauses (at least one) and, besides
    them, only column DEFAULT / NOT NULL changes (`others`, each one action's DuckDB SQL,
    e.g. `ALTER COLUMN "d" SET DEFAULT 5`, applied after the new types)."""

    table: str
    schema: str | None
    catalog: str | None
    if_exists: bool
    changes: tuple[TypeChange, ...]
    others: tuple[str, ...] = ()


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def extract(tree: exp.Expr) -> AlterColumnTypes | None:
    """The request of an ALTER TABLE tree (after the transpiler's rewrites), or None when
    the statement is anything else (it then runs as before)."""
    if not isinstance(tree, exp.Alter) or str(tree.args.get("kind") or "").upper() != "TABLE":
        return None
    table = tree.this
    if not isinstance(table, exp.Table) or not table.name:
        return None
    changes: list[TypeChange] = []
    others: list[str] = []
    for action in tree.args.get("actions") or []:
        if not isinstance(action, exp.AlterColumn) or not action.this:
            return None
        if action.args.get("dtype") is not None:
            changes.append(_change(action))
            continue
        other = _other(action)
        if other is None:
            return None
        others.append(other)
    names = [c.column.lower() for c in changes]
    if not changes or len(set(names)) != len(names):
        return None  # (the same column twice: left to DuckDB's own error)
    return AlterColumnTypes(
        table=table.name,
        schema=table.db or None,
        catalog=table.catalog or None,
        if_exists=bool(tree.args.get("exists")),
        changes=tuple(changes),
        others=tuple(others),
    )


def _sql(node: exp.Expr) -> str:
    return generator().generate(node, copy=True)


def _change(action: exp.AlterColumn) -> TypeChange:
    dtype = action.args["dtype"]
    length = declared_length(dtype)
    using = action.args.get("using")
    collate = action.args.get("collate")
    return TypeChange(
        column=action.this.name,
        type_sql="VARCHAR" if length is not None else _sql(dtype),
        length=length,
        using=_sql(using) if isinstance(using, exp.Expr) else None,
        collate=_sql(collate) if isinstance(collate, exp.Expr) else None,
    )


def _other(action: exp.AlterColumn) -> str | None:
    """SET/DROP DEFAULT, SET/DROP NOT NULL as DuckDB SQL; None for any other form."""
    args = {
        k: v for k, v in action.args.items() if k != "this" and v is not None and v is not False
    }
    column = f"ALTER COLUMN {quote(action.this.name)}"
    if set(args) == {"default"} and isinstance(args["default"], exp.Expr):
        return f"{column} SET DEFAULT {_sql(args['default'])}"
    if args == {"drop": True}:
        return f"{column} DROP DEFAULT"
    if set(args) == {"drop", "allow_null"}:
        return f"{column} DROP NOT NULL"
    if not args and action.args.get("allow_null") is False:
        return f"{column} SET NOT NULL"
    return None
