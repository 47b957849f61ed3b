"""pgvector syntax -> DuckDB arrays.

- type `vector(n)` -> `FLOAT[n]`; unsized `vector` -> `FLOAT[vector_dims]` (DuckDB's
  array functions and HNSW need a fixed size);
- `'[1,2,3]'::vector` -> `CAST('[1,2,3]' AS FLOAT[3])` (size counted from the literal);
  `$1::vector` (or `$1::text::vector`) as a value stored or compared -> `CAST($1 AS
  FLOAT[])` (the bound value's length); as a function argument or a distance operand it
  is FLOAT[vector_dims];
- operators (parsed by transpiler.dialects, rendered by its generator): `<=>` ->
  array_cosine_distance, `<->` -> array_distance, `<#>` -> array_negative_inner_product;
  a bare '[..]' string or a `$n` operand is cast to FLOAT[n] / FLOAT[vector_dims]; a `$n`
  operand beside a column whose size the column hints know (FLOAT[3], vector(3)) is cast
  to that size instead.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_hints import ColumnHints, table_of
from transpiler.dialects import CosineDistance, NegInnerProduct
from transpiler.treeutil import attached


def vector_literal_size(text: str) -> int | None:
    """Number of elements of a pgvector text literal '[1, 2.5, -3e-2]', else None."""
    body = text.strip()
    if len(body) < 2 or body[0] != "[" or body[-1] != "]":
        return None
    items = body[1:-1].split(",")
    try:
        for item in items:
            float(item)
    except ValueError:
        return None
    return len(items)


def float_array(size: int) -> exp.DataType:
    return exp.DataType(
        this=exp.DType.ARRAY,
        expressions=[exp.DataType(this=exp.DType.FLOAT)],
        values=[exp.Literal.number(size)],
        nested=True,
    )


def float_list() -> exp.DataType:
    return exp.DataType(
        this=exp.DType.ARRAY, expressions=[exp.DataType(this=exp.DType.FLOAT)], nested=True
    )


def _is_parameter(node: exp.Expr) -> bool:
    """`$1`, or `$1` under casts (`$1::text::vector`)."""
    while isinstance(node, exp.Cast):
        node = node.this
    return isinstance(node, exp.Parameter)


# Where `$1::vector` may stay a list of any length: a VALUES row, SET e = ..., e = ...,
# a projection. Function arguments and distance operands (DuckDB's array functions need
# a fixed size) keep FLOAT[vector_dims].
_LIST_PARENTS = (exp.Tuple, exp.EQ, exp.NEQ, exp.Alias, exp.Select)


def _stored_as_is(cast: exp.Cast) -> bool:
    return isinstance(cast.parent, _LIST_PARENTS)


def _vector_size(dtype: exp.DataType) -> int | None:
    params = dtype.expressions
    if params and isinstance(params[0].this, exp.Literal):
        return int(params[0].this.this)
    return None


def _is_vector_type(node: exp.Expr) -> bool:
    return isinstance(node, exp.DataType) and node.this == exp.DType.VECTOR


def _as_vector(operand: exp.Expr, dims: int) -> exp.Expr:
    if isinstance(operand, exp.Literal) and operand.is_string:
        size = vector_literal_size(operand.this)
        if size is not None:
            return exp.Cast(this=operand, to=float_array(size))
    if isinstance(operand, exp.Parameter):
        return exp.Cast(this=operand, to=float_array(dims))
    return operand


def _column_size(node: exp.Expr, hints: ColumnHints | None) -> int | None:
    """n of the FLOAT[n] column `node` reads, when the hints know it for sure."""
    if hints is None or not isinstance(node, exp.Column):
        return None
    table = table_of(node, hints)
    return hints.vector_size(table, node.name.lower()) if table is not None else None


def _operand_dims(node: exp.Expr, other: exp.Expr, dims: int, hints: ColumnHints | None) -> int:
    """The size a parameter operand of a distance takes: its column neighbour's, else the
    model's."""
    if _is_parameter(node):
        return _column_size(other, hints) or dims
    return dims


def _resize_parameter(node: exp.Expr, size: int) -> None:
    """`CAST($n AS FLOAT[d])` (a `$n::vector` operand) -> FLOAT[size]."""
    if isinstance(node, exp.Cast) and _is_parameter(node.this):
        node.set("to", float_array(size))


def rewrite(nodes: list[exp.Expr], dims: int, hints: ColumnHints | None = None) -> None:
    """Rewrite pgvector types and operands among `nodes` (a tree snapshot) in place."""
    for cast in nodes:
        if not isinstance(cast, exp.Cast):
            continue
        to = cast.args.get("to")
        if not _is_vector_type(to):
            continue
        size = _vector_size(to)
        operand = cast.this
        if size is None and isinstance(operand, exp.Literal) and operand.is_string:
            size = vector_literal_size(operand.this)
        if size is None and _is_parameter(operand) and _stored_as_is(cast):
            # '$1::vector' takes whatever length the bound value has, as in pgvector;
            # DuckDB casts the list to the column's FLOAT[n] on INSERT / UPDATE.
            cast.set("to", float_list())
            continue
        cast.set("to", float_array(size or dims))
    for node in nodes:
        if _is_vector_type(node) and attached(node):
            node.replace(float_array(_vector_size(node) or dims))
        elif isinstance(node, (CosineDistance, NegInnerProduct, exp.Distance)):
            left, right = node.this, node.expression
            left_dims = _operand_dims(left, right, dims, hints)
            right_dims = _operand_dims(right, left, dims, hints)
            if left_dims != dims:
                _resize_parameter(left, left_dims)
            if right_dims != dims:
                _resize_parameter(right, right_dims)
            node.set("this", _as_vector(left, left_dims))
            node.set("expression", _as_vector(right, right_dims))
