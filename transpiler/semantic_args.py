"""What an argument of a semantic function is: a stored vector, text to embed, or
something that cannot be told without types (then it is passed on as written, and the
server explains DuckDB's type error; see proxy/db/duckdb_errors.py).

- a column: its kind from the catalog hints when its table is known (column_hints),
  else by name: a vector if the name contains "embed" or "vec" or is "emb", else text;
- plainly text: string functions (upper, trim, substring, replace, concat, ...), `||`
  with a text operand, casts to a text type, a scalar subquery selecting text, and
  CASE / COALESCE whose results are all text;
- plainly a vector: array literals, casts to an array or vector type, markers.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_hints import TEXT, VECTOR, ColumnHints, table_of
from transpiler.dialects import HatiEmbed
from transpiler.literals import string_value

_TEXT_FUNCTIONS = (
    exp.Upper,
    exp.Lower,
    exp.Initcap,
    exp.Trim,
    exp.Substring,
    exp.Left,
    exp.Right,
    exp.Pad,
    exp.Replace,
    exp.RegexpReplace,
    exp.RegexpExtract,
    exp.Translate,
    exp.Overlay,
    exp.SplitPart,
    exp.ConcatWs,
    exp.Concat,  # Postgres concat() always returns text
    exp.Format,
    exp.Repeat,
    exp.Reverse,
    exp.MD5,
    exp.Chr,
    exp.TimeToStr,
    exp.ToChar,
    exp.ArrayToString,
    exp.GroupConcat,
    exp.Collate,
)
_TEXT_NAMES = frozenset({"btrim", "quote_literal", "quote_ident", "printf", "lcase", "ucase"})
_TEXT_TYPES = frozenset(
    {
        exp.DType.TEXT,
        exp.DType.VARCHAR,
        exp.DType.CHAR,
        exp.DType.NCHAR,
        exp.DType.NVARCHAR,
        exp.DType.NAME,
        exp.DType.BPCHAR,
    }
)
_VECTOR_TYPES = frozenset({exp.DType.ARRAY, exp.DType.LIST, exp.DType.VECTOR})


def is_vector_name(name: str) -> bool:
    low = name.lower()
    return "embed" in low or "vec" in low or low == "emb"


def column_kind(column: exp.Column, hints: ColumnHints | None) -> tuple[str, str | None]:
    """(VECTOR, TEXT or OTHER, the registered embedding column of a text column).

    Call it while `column` is still in its tree: its table is found from its parents."""
    if hints is not None:
        table = table_of(column, hints)
        columns = hints.columns(table) if table is not None else None
        if columns is not None:
            name = column.name.lower()
            kind = columns.get(name)
            if kind is not None:
                vector = hints.embedding_column(table, name) if kind == TEXT else None
                return kind, vector
    return (VECTOR if is_vector_name(column.name) else TEXT), None


def kind_of(node: exp.Expr, hints: ColumnHints | None) -> str | None:
    """VECTOR or TEXT when `node` plainly is one, else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    if string_value(node) is not None:
        return TEXT
    if isinstance(node, exp.Column):
        kind = column_kind(node, hints)[0]
        return kind if kind in (VECTOR, TEXT) else None
    if isinstance(node, (exp.Cast, exp.TryCast)):
        target = node.to.this
        if target in _TEXT_TYPES:
            return TEXT
        return VECTOR if target in _VECTOR_TYPES else None
    if isinstance(node, (exp.Array, HatiEmbed)):
        return VECTOR
    if isinstance(node, _TEXT_FUNCTIONS):
        return TEXT
    if isinstance(node, exp.DPipe):  # text if either side is text; arrays concatenate too
        kinds = (kind_of(node.this, hints), kind_of(node.expression, hints))
        return TEXT if TEXT in kinds else (VECTOR if kinds == (VECTOR, VECTOR) else None)
    if isinstance(node, exp.Anonymous):
        return TEXT if node.name.lower() in _TEXT_NAMES else None
    if isinstance(node, exp.Subquery):
        body = node.this
        if isinstance(body, exp.Select) and len(body.expressions) == 1:
            return kind_of(body.expressions[0].unalias(), hints)
        return None
    if isinstance(node, (exp.Coalesce, exp.Case, exp.If)):
        return _same_kind(_results(node), hints)
    return None


def _results(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Coalesce):
        return [node.this, *node.expressions]
    if isinstance(node, exp.Case):
        results = [branch.args.get("true") for branch in node.args.get("ifs") or ()]
        return [*results, node.args.get("default")]
    return [node.args.get("true"), node.args.get("false")]


def _same_kind(nodes: list[exp.Expr | None], hints: ColumnHints | None) -> str | None:
    kinds = {kind_of(n, hints) for n in nodes if n is not None and not isinstance(n, exp.Null)}
    return kinds.pop() if len(kinds) == 1 else None
