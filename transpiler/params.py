"""Parameter type inference for ParameterDescription (drivers that send OID 0).

`infer_param_types(stmt, column_type, table_columns=None)` returns
`{n: duckdb_type}` for each `$n` whose type follows from its context:

- `$n::type` / `CAST($n AS type)`;
- `col op $n` for =, <>, <, <=, >, >=, LIKE, ILIKE, IN (...), BETWEEN, and +, -, *, /,
  % with a column (the column's type); for the binary operators also with a cast
  (`$1::int + $2`), a number (`$1 + 1`: integer, `$1 * 1.5`: numeric) or a COALESCE of
  those (`COALESCE(n, 0) + $1`: the first argument's type that is known);
- `INSERT INTO t (cols) VALUES ($1, ...)`; without a column list the table's column
  order from `table_columns(schema, table)`;
- `UPDATE t SET c = $n`;
- `col op ANY($n)` -> an array of the column's type (VARCHAR[] when the other side is
  not a column): psycopg sends a list of strings with OID 0 (pgcli's
  `c.relkind = ANY(%s)`), and DuckDB cannot bind ANY over a text value;
- `doc #> $n` / `doc #>> $n` -> VARCHAR[] (the path, text[] in PostgreSQL);
- `LIMIT $n` / `OFFSET $n` -> BIGINT; `__HATI_EMBED__($n)` -> VARCHAR (a search text);
  `__HATI_THRESHOLD__($n)` -> DOUBLE (a semantic_match threshold).

Callbacks: `column_type(schema, table, column) -> type | None` and
`table_columns(schema, table) -> [(name, type), ...] | None`. Unknown parameters are
left out; the server defaults them to text. Pure: parses `stmt.sql` (DuckDB SQL).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from transpiler import division, upsert_guard
from transpiler.dialects import DUCKDB
from transpiler.model import Statement

ColumnType = Callable[[str | None, str, str], str | None]
TableColumns = Callable[[str | None, str], list[tuple[str, str]] | None]

_COMPARE = (
    exp.EQ,
    exp.NEQ,
    exp.LT,
    exp.LTE,
    exp.GT,
    exp.GTE,
    exp.Like,
    exp.ILike,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    # `tags @> $1`, `&&`, `<@`: PostgreSQL types the unknown side as the array column
    exp.ArrayContainsAll,
    exp.ArrayContainedBy,
    exp.ArrayOverlaps,
    # `tags || $1`: an array column's unknown other side is an array (array_cat), a text
    # column's is text
    exp.DPipe,
)


def infer_param_types(
    stmt: Statement, column_type: ColumnType, table_columns: TableColumns | None = None
) -> dict[int, str]:
    if stmt.param_count == 0:
        return {}
    # EXPLAIN <query>: the parameters are the query's (the prefix is not SQL sqlglot reads).
    sql = stmt.sql[len(stmt._prefix) :] if stmt._prefix else stmt.sql
    try:
        tree = DUCKDB.parse(sql)[0]
    except (ParseError, TokenError, IndexError):
        return {}
    if tree is None:
        return {}
    if isinstance(tree, exp.Insert) and tree.args.get("conflict") is not None:
        upsert_guard.unwrap(tree)  # the parameters' places in the INSERT as written
    scope = _Scope(tree, column_type)
    found: dict[int, str] = {}
    # DuckDB's reader parses `$n` as a Placeholder whose `this` is "n".
    for param in tree.find_all(exp.Placeholder, exp.Parameter):
        n = _number(param)
        if n is None:
            continue
        if n in found:
            continue
        typ = _infer(param, scope, table_columns)
        if typ:
            found[n] = typ
    return found


def _number(param: exp.Expr) -> int | None:
    value = param.this
    text = value.this if isinstance(value, exp.Literal) else value
    return int(text) if isinstance(text, str) and text.isdigit() else None


class _Scope:
    """Tables of the statement by alias, for resolving column references."""

    def __init__(self, tree: exp.Expr, column_type: ColumnType) -> None:
        self.column_type = column_type
        self.tables: dict[str, tuple[str | None, str]] = {}
        for table in tree.find_all(exp.Table):
            if not table.name:
                continue
            ref = (table.db or None, table.name)
            self.tables.setdefault(table.alias_or_name.lower(), ref)
            self.tables.setdefault(table.name.lower(), ref)

    def type_of(self, column: exp.Column) -> str | None:
        if column.table:
            ref = self.tables.get(column.table.lower())
            return self.column_type(ref[0], ref[1], column.name) if ref else None
        for schema, table in dict.fromkeys(self.tables.values()):
            typ = self.column_type(schema, table, column.name)
            if typ:
                return typ
        return None


def _infer(param: exp.Expr, scope: _Scope, table_columns: TableColumns | None) -> str | None:
    parent = param.parent
    while isinstance(parent, exp.Paren) and isinstance(parent.parent, exp.Cast):
        parent = parent.parent  # ($1)::int[], as Django writes casts
    if isinstance(parent, exp.Cast):
        return parent.args["to"].sql(dialect=DUCKDB)
    if isinstance(parent, (exp.Limit, exp.Offset)):
        return "BIGINT"
    if isinstance(parent, exp.Anonymous) and parent.name.upper() == "__HATI_EMBED__":
        return "VARCHAR"
    if isinstance(parent, exp.Anonymous) and parent.name.upper() == "__HATI_THRESHOLD__":
        return "DOUBLE"
    if isinstance(parent, exp.Anonymous) and parent.name.upper() == "__HATI_JSON_POINTER":
        return "VARCHAR[]"  # `doc #> $n` / `#>>`: a text[] path (jsonb_ops.py)
    if isinstance(parent, exp.Paren) and isinstance(parent.parent, exp.Any):
        return _any_array_type(parent.parent, scope)
    if isinstance(parent, exp.EQ) and isinstance(parent.parent, exp.Update):
        return _other_column_type(parent, param, scope)
    if isinstance(parent, _COMPARE):
        return _other_column_type(parent, param, scope)
    if isinstance(parent, exp.ArrayConcat):  # list_concat(arr, $n): `arr || $n` (array_text)
        others = [parent.this, *parent.expressions]
        cols = [o for o in others if isinstance(o, exp.Column)]
        return scope.type_of(cols[0]) if cols else None
    if isinstance(parent, exp.Anonymous) and parent.name.lower() in division.MACROS:
        left, right = parent.expressions  # `col / $n`, `col % $n` (division.py)
        other = right if left is param else left
        return scope.type_of(other) if isinstance(other, exp.Column) else None
    if isinstance(parent, _COMMON_TYPE):
        return _common_type(parent, param, scope)
    case = parent.parent if isinstance(parent, exp.If) else None
    if isinstance(case, exp.Case) and param is parent.args.get("true"):
        return _common_type(case, param, scope)  # CASE WHEN .. THEN $n
    if isinstance(parent, exp.Case) and param is parent.args.get("default"):
        return _common_type(parent, param, scope)  # CASE .. ELSE $n
    if isinstance(parent, exp.ArraySize) and param is parent.expression:
        return "INTEGER"  # array_length(arr, $n): the dimension
    if isinstance(parent, exp.In) and isinstance(parent.this, exp.Column):
        return scope.type_of(parent.this)
    if isinstance(parent, exp.Between) and isinstance(parent.this, exp.Column):
        return scope.type_of(parent.this)
    if isinstance(parent, exp.Tuple) and isinstance(parent.parent, exp.Values):
        return _insert_column_type(param, parent, scope, table_columns)
    return None


# Functions whose arguments and result share one type: an unknown argument takes the
# type of a known one (`COALESCE(price, $1)`: numeric, as PostgreSQL resolves it).
_COMMON_TYPE = (exp.Coalesce, exp.Greatest, exp.Least, exp.Nullif)


def _common_type(node: exp.Expr, param: exp.Expr, scope: _Scope) -> str | None:
    if isinstance(node, exp.Case):
        values = [i.args.get("true") for i in node.args.get("ifs") or ()]
        values.append(node.args.get("default"))
    else:
        values = [node.this, node.args.get("expression"), *node.expressions]
    for value in values:
        if value is not None and value is not param:
            typ = _expression_type(value, scope)
            if typ:
                return typ
    return None


def _any_array_type(node: exp.Any, scope: _Scope) -> str | None:
    comparison = node.parent
    if not isinstance(comparison, _COMPARE) or comparison.expression is not node:
        return None
    other = comparison.this
    element = scope.type_of(other) if isinstance(other, exp.Column) else None
    if element is None or element.endswith("]"):
        element = "VARCHAR"
    return f"{element}[]"


def _other_column_type(node: exp.Expr, param: exp.Expr, scope: _Scope) -> str | None:
    """An operator's unknown side takes the other side's type, as PostgreSQL resolves
    `unknown op known`: a column, a cast (`$1::int + $2`) or a number (`$1 + 1`)."""
    return _expression_type(node.expression if node.this is param else node.this, scope)


# PostgreSQL's numeric promotion order: `int8 * int4` is int8, `int4 + numeric` numeric.
_NUMERIC_RANK = {
    "SMALLINT": 0, "INT2": 0, "INTEGER": 1, "INT": 1, "INT4": 1, "BIGINT": 2, "INT8": 2,
    "NUMERIC": 3, "DECIMAL": 3, "REAL": 4, "FLOAT": 4, "FLOAT4": 4, "DOUBLE": 5, "FLOAT8": 5,
}  # fmt: skip
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)


def _expression_type(other: exp.Expr, scope: _Scope) -> str | None:
    """The type of a known operand: a column, a cast, a number, or arithmetic over those
    (`$1::int8 * 100 + $2`: $2 is int8, as pgx's pool queries need)."""
    while isinstance(other, exp.Paren):
        other = other.this
    if isinstance(other, exp.Column):
        return scope.type_of(other)
    if isinstance(other, exp.Cast):
        return other.args["to"].sql(dialect=DUCKDB)
    if isinstance(other, exp.Literal) and not other.is_string:
        return "INTEGER" if other.this.isdigit() and int(other.this) < 2**31 else "NUMERIC"
    if isinstance(other, _AGGREGATES):
        return _aggregate_type(other, scope)
    if isinstance(other, _COMMON_TYPE + (exp.Case,)):
        return _common_type(other, other, scope)
    for kind, typ in _RESULT_TYPES.items():
        if isinstance(other, kind):
            return typ
    if isinstance(other, _ARITHMETIC):
        left = _expression_type(other.this, scope)
        right = _expression_type(other.expression, scope)
        ranks = [_NUMERIC_RANK.get((t or "").upper().split("(")[0]) for t in (left, right)]
        if ranks[0] is None or ranks[1] is None:
            return None
        return left if ranks[0] >= ranks[1] else right
    return None


# Result types of functions a comparison's other side often is: `length(t) = $1`,
# `array_length(a, 1) = $1` (Tortoise's `__len`) bind an int4.
_RESULT_TYPES: dict[type[exp.Expr], str] = {
    exp.Length: "INTEGER",
    exp.ArraySize: "INTEGER",
    exp.Lower: "VARCHAR",
    exp.Upper: "VARCHAR",
}
_AGGREGATES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)
# PostgreSQL's sum(): int2 / int4 -> int8, int8 -> numeric; avg(): integers -> numeric.
_SUM_TYPES = {0: "BIGINT", 1: "BIGINT", 2: "NUMERIC", 3: "NUMERIC"}
_AVG_TYPES = {0: "NUMERIC", 1: "NUMERIC", 2: "NUMERIC", 3: "NUMERIC"}


def _aggregate_type(node: exp.Expr, scope: _Scope) -> str | None:
    """An aggregate's result type, as PostgreSQL's: `HAVING COUNT(x) >= $1` (Tortoise's
    annotate().filter()) binds $1 as int8."""
    if isinstance(node, exp.Count):
        return "BIGINT"
    arg = _expression_type(node.this, scope)
    if arg is None or isinstance(node, (exp.Min, exp.Max)):
        return arg
    base = arg.upper().split("(")[0]
    rank = _NUMERIC_RANK.get(base)
    if rank is None:
        return None
    table = _SUM_TYPES if isinstance(node, exp.Sum) else _AVG_TYPES
    return table.get(rank, "REAL" if rank == 4 and isinstance(node, exp.Sum) else "DOUBLE")


def _insert_column_type(
    param: exp.Expr,
    row: exp.Tuple,
    scope: _Scope,
    table_columns: TableColumns | None,
) -> str | None:
    insert = row.parent.parent if row.parent else None
    if not isinstance(insert, exp.Insert):
        return None
    index = row.expressions.index(param)
    target = insert.this
    if isinstance(target, exp.Schema):
        table = target.this
        names = [c.name for c in target.expressions]
        if index >= len(names) or not isinstance(table, exp.Table):
            return None
        return scope.column_type(table.db or None, table.name, names[index])
    if isinstance(target, exp.Table) and table_columns is not None:
        columns = table_columns(target.db or None, target.name)
        if columns and index < len(columns):
            return columns[index][1]
    return None


_EXPLICIT = re.compile(
    r"(?:\$(\d+)\s*::|\bCAST\s*\(\s*\$(\d+)\s+AS)\s*(?:pg_catalog\s*\.\s*|public\s*\.\s*)?"
    r"(oid\s*\[\s*\]|numeric\b|decimal\b|vector\b)(?!\s*[(\[])",
    re.IGNORECASE,
)
# pgvector's `$1::vector` becomes FLOAT[] (no size) for DuckDB; the driver is still told
# the parameter is a vector, as PostgreSQL with pgvector tells it.
_EXPLICIT_TYPES = {"numeric": "NUMERIC", "decimal": "NUMERIC", "vector": "VECTOR"}


def explicit_param_casts(sql: str) -> dict[int, str]:
    """`$n::oid[]` / `$n::numeric` in the original SQL: types the rewrites erase.

    The DuckDB SQL casts `oid[]` to BIGINT[] and drops a bare numeric cast (DuckDB's
    DECIMAL would round), but a driver must still be told the Postgres type: asyncpg
    introspects an int8[] parameter forever, and sends a Decimal only for numeric.
    Returns {n: "OID[]" | "NUMERIC" | "VECTOR"}.
    """
    if "$" not in sql:
        return {}
    out = {}
    for match in _EXPLICIT.finditer(sql):
        kind = re.sub(r"\s", "", match.group(3).lower())
        out[int(match.group(1) or match.group(2))] = (
            "OID[]" if kind == "oid[]" else _EXPLICIT_TYPES[kind]
        )
    return out
