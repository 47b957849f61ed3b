"""Subscripts of PostgreSQL's int2vector / oidvector catalog columns start at 0.

`pg_index.indkey[0]` is an index's first column in PostgreSQL (psqlODBC's primaryKeys()
and statistics() ask `i.indkey[ia.attnum - 1]`); the catalog here holds these columns as
DuckDB lists, whose subscripts start at 1. A subscript of one of these columns, by name,
gets 1 added; slices and other arrays (int2[] such as `pg_constraint.conkey`, 1-based in
PostgreSQL too) are left as written. Likewise `generate_subscripts(col, 1)` counts
from 0 for these columns (drizzle-kit's `generate_subscripts(i.indkey, 1) + 1`).
"""

from __future__ import annotations

from sqlglot import exp

# The int2vector / oidvector columns of pg_catalog (PostgreSQL 15).
VECTOR_COLUMNS = frozenset(
    {
        "indkey",
        "indclass",
        "indcollation",
        "indoption",
        "proargtypes",
        "tgattr",
        "partattrs",
        "partclass",
        "partcollation",
        "stxkeys",
    }
)


def rewrite(node: exp.Bracket) -> None:
    """`col[i]` -> `col[i + 1]` when `col` names an int2vector / oidvector column."""
    column = node.this
    if not isinstance(column, exp.Column) or column.name.lower() not in VECTOR_COLUMNS:
        return
    if len(node.expressions) != 1 or isinstance(node.expressions[0], exp.Slice):
        return
    index = node.expressions[0]
    if isinstance(index, exp.Literal) and index.is_int:
        node.set("expressions", [exp.Literal.number(int(index.name) + 1)])
    else:
        node.set(
            "expressions",
            [exp.Add(this=exp.paren(index, copy=False), expression=exp.Literal.number(1))],
        )


def rewrite_subscripts(node: exp.Anonymous) -> None:
    """`generate_subscripts(col, 1)` -> `(generate_subscripts(col, 1) - 1)` for these."""
    if node.name.lower() != "generate_subscripts" or not node.expressions:
        return
    if isinstance(node.parent, exp.Table):
        return  # in FROM: pgcompat makes it a derived table, then rewrites the call there
    column = node.expressions[0]
    if not isinstance(column, exp.Column) or column.name.lower() not in VECTOR_COLUMNS:
        return
    node.replace(exp.paren(exp.Sub(this=node.copy(), expression=exp.Literal.number(1))))
