"""PostgreSQL's array size functions over DuckDB lists (one-dimensional arrays).

DuckDB has no `array_upper` / `array_lower` (cardinality and array_ndims, which count
every dimension: 83_pg_functions_more.sql), and its `array_length` of an empty list is 0 where PostgreSQL's is NULL
(an empty array has no dimensions). The sizes are integer, as PostgreSQL's are. Dimension arguments other than the constant 1 are
left to DuckDB (which knows no dimensions beyond the outer list).
"""

from __future__ import annotations

from sqlglot import exp

NAMES = frozenset({"array_upper", "array_lower"})  # cardinality, array_ndims: macros


def _len(arr: exp.Expr) -> exp.Expr:
    # PostgreSQL's sizes are integer (int4); DuckDB's len() is BIGINT
    return exp.cast(exp.Anonymous(this="len", expressions=[arr]), exp.DType.INT)


def _when_nonempty(arr: exp.Expr, value: exp.Expr) -> exp.Expr:
    cond = exp.GT(this=_len(arr), expression=exp.Literal.number(0))
    return exp.Case(ifs=[exp.If(this=cond, true=value)])


def _first_dim(arg: exp.Expr | None) -> bool:
    return isinstance(arg, exp.Literal) and not arg.is_string and arg.this == "1"


def rewrite_length(node: exp.ArraySize) -> None:
    """array_length(a, 1): NULL for an empty array, as in PostgreSQL."""
    if _first_dim(node.expression):
        node.replace(exp.Nullif(this=_len(node.this.copy()), expression=exp.Literal.number(0)))


def rewrite_call(node: exp.Anonymous) -> None:
    """array_upper(a, 1) / array_lower(a, 1)."""
    name = node.name.lower()
    args = list(node.expressions)
    if not args:
        return
    arr = args[0].copy()
    if name == "array_upper" and len(args) == 2 and _first_dim(args[1]):
        node.replace(exp.Nullif(this=_len(arr), expression=exp.Literal.number(0)))
    else:
        lower = name == "array_lower" and len(args) == 2 and _first_dim(args[1])
        if lower:
            node.replace(_when_nonempty(arr, exp.Literal.number(1)))
