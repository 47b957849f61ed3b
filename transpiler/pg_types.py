"""PostgreSQL type spellings DuckDB reads otherwise (called from pgcompat's tree walk).

- `numeric` / `decimal` without precision -> numeric_type's DECIMAL(38,10);
- `CREATE TYPE t AS (a int, b text)` -> a STRUCT type;
- `GENERATED ALWAYS AS (expr) STORED` -> DuckDB's (virtual) generated column;
- `'today'::date`, `timestamp 'now'`, ...: PostgreSQL's special date / time inputs.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from transpiler import numeric_type


def generated_column(node: exp.ComputedColumnConstraint) -> None:
    """`GENERATED ALWAYS AS (expr) STORED`: sqlglot drops STORED (DuckDB has only VIRTUAL
    generated columns: the same values, computed when read) and the parentheses DuckDB
    requires."""
    if not isinstance(node.this, exp.Paren):
        node.set("this", exp.Paren(this=node.this))


def composite_type(node: exp.Create) -> None:
    """`CREATE TYPE t AS (a int, b text)`: PostgreSQL's composite type is DuckDB's STRUCT."""
    schema = node.expression
    if not isinstance(schema, exp.Schema) or not all(
        isinstance(c, exp.ColumnDef) for c in schema.expressions
    ):
        return
    fields = [
        exp.ColumnDef(this=c.this.copy(), kind=c.args["kind"].copy()) for c in schema.expressions
    ]
    node.set("expression", exp.DataType(this=exp.DType.STRUCT, expressions=fields, nested=True))


def bare_numeric(node: exp.DataType) -> None:
    """numeric / decimal without precision -> numeric_type's DECIMAL(38,10) (DuckDB's bare
    DECIMAL is (18,3): it rounded). A cast of a bound parameter keeps it bare: pgcompat's `_typed_cast`
    drops that cast, the parameter binding as a Decimal of its own digits."""
    if node.this is not exp.DataType.Type.DECIMAL or node.expressions:
        return
    parent = node.parent
    if isinstance(parent, exp.Cast) and isinstance(parent.this, (exp.Parameter, exp.Placeholder)):
        return
    node.set(
        "expressions",
        [
            exp.DataTypeParam(this=exp.Literal.number(numeric_type.PRECISION)),
            exp.DataTypeParam(this=exp.Literal.number(numeric_type.SCALE)),
        ],
    )


_DATETIME_TYPES = {
    exp.DataType.Type.DATE,
    exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.TIME,
}
# PostgreSQL's special date / time input strings, as SQL DuckDB runs (then cast to the type)
_SPECIAL_DATETIMES = {
    "now": "now()",
    "today": "current_date",
    "tomorrow": "current_date + 1",
    "yesterday": "current_date - 1",
    "epoch": "'1970-01-01 00:00:00+00'",  # read by the cast: 00:00 in any zone for timestamp
    "allballs": "TIME '00:00:00'",
}


def special_datetime(value: exp.Expr, to: exp.DataType) -> exp.Expr | None:
    """`'today'::date`, `timestamp 'now'`, `'epoch'::timestamptz`: PostgreSQL's special
    input strings (DuckDB reads only infinity and -infinity)."""
    if to.this not in _DATETIME_TYPES or not isinstance(value, exp.Literal) or not value.is_string:
        return None
    sql = _SPECIAL_DATETIMES.get(value.name.strip().lower())
    if sql is None or (
        to.this is exp.DataType.Type.DATE and value.name.strip().lower() == "allballs"
    ):
        return None
    return exp.cast(sqlglot.parse_one(sql, read="duckdb"), to.copy())
