"""COLLATE clauses: text compares and sorts by code point here, as PostgreSQL does under
the "C" collation, so the collations that mean that (and the default) need no clause,
in an expression (`ORDER BY name COLLATE "C"`, psql's `COLLATE pg_catalog.default`) or a
column (pg_dump writes `a text COLLATE pg_catalog."C"`). DuckDB knows none of them."""

from __future__ import annotations

from sqlglot import exp

_DROP_COLLATIONS = {"default", "c", "posix", "ucs_basic"}


def rewrite(node: exp.Collate | exp.CollateColumnConstraint) -> None:
    column = isinstance(node, exp.CollateColumnConstraint)
    collation = node.this if column else node.expression
    if not isinstance(collation, exp.Expr) or collation.name.lower() not in _DROP_COLLATIONS:
        return
    if not column:
        node.replace(node.this)
    elif isinstance(node.parent, exp.ColumnConstraint):
        node.parent.pop()
