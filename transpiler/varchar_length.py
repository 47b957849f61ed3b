"""varchar(n): the declared length kept in DuckDB's own catalog, as a CHECK constraint.

DuckDB 1.5 parses `VARCHAR(n)` and forgets n. So a column declared `varchar(n)` /
`character varying(n)` in CREATE TABLE becomes `VARCHAR CHECK (length(col) <= n)`: DuckDB
stores, copies (its table DDL, agent branches) and enforces that constraint, and the
catalog layer reads the length back from it (proxy/db/catalog: `__hati_length_limit`, the
typmod n + 4 as Postgres stores it); proxy.db.duckdb_errors reports its failure as 22001.
`length` counts characters (code points), as Postgres' varchar(n) does.

ALTER COLUMN ... TYPE on such a column, or to a varchar(n), rebuilds the table with the new
CHECK (DuckDB cannot change the type of a column with a CHECK, nor add one): see
alter_type.py and proxy/pgserver/alter_rebuild.py.

char(n) / character(n) / char (char(1)) columns are kept the same way, as `VARCHAR CHECK
(length(rtrim(col, ' ')) <= n)` (bpchar ignores trailing blanks: blanks beyond n are cut on
output, not refused; values are stored unpadded and padded to n where they go out,
proxy/pgserver/results.py), and an unsized `varchar` as `VARCHAR CHECK (length(col) >= 0)`,
which holds for every value and only records the word (DuckDB's VARCHAR is text too): the
catalog reads them back as bpchar / varchar with typmod n + 4 / -1.

Not covered (the column stays unbounded text, as before): ALTER TABLE ADD COLUMN (DuckDB
1.5: "Adding columns with constraints not yet supported"), generated columns ("Constraints
on generated columns are not supported yet"), arrays of varchar(n) / varchar, unsized
bpchar, a DuckLake (no CHECKs: without_word_checks).

An explicit cast `x::varchar(n)` truncates to n characters, as in Postgres:
`left(CAST(x AS VARCHAR), n)`. A cast to char(n) (bare `char` / `character`: char(1)) cuts
too, and drops the trailing spaces PostgreSQL's bpchar ignores in comparisons, length()
and concatenation: `rtrim(left(CAST(x AS VARCHAR), n), ' ')` (it is not padded to n on
output as PostgreSQL's is).
"""

from __future__ import annotations

import re

from sqlglot import exp

# The CHECKs column_def writes for char(n) and unsized varchar, as the DuckDB SQL has them.
_WORD_CHECKS = re.compile(
    r""" CHECK \(LENGTH\((?:RTRIM\((?:"(?:[^"]|"")*"|[^\s(),"]+), ' '\)\) <= \d+"""
    r"""|(?:"(?:[^"]|"")*"|[^\s(),"]+)\) >= 0)\)"""
)


def declared_length(dtype: exp.Expr | None) -> int | None:
    """n of a scalar `varchar(n)` type node (n >= 1), else None."""
    if not isinstance(dtype, exp.DataType) or dtype.this is not exp.DType.VARCHAR:
        return None
    params = dtype.expressions
    if len(params) != 1:
        return None
    param = params[0]
    value = param.this if isinstance(param, exp.DataTypeParam) else param
    if not isinstance(value, exp.Literal) or value.is_string or not value.name.isdigit():
        return None
    n = int(value.name)
    return n if n >= 1 else None


def _unsized() -> exp.DataType:
    return exp.DataType(this=exp.DType.VARCHAR, nested=False)


def column_def(node: exp.ColumnDef) -> None:
    """A `varchar(n)` column of CREATE TABLE -> VARCHAR with `CHECK (length(col) <= n)`;
    `char(n)` -> VARCHAR with `CHECK (length(rtrim(col, ' ')) <= n)` (bpchar ignores
    trailing blanks: blanks beyond n are cut on output, not refused); an unsized
    `varchar` -> VARCHAR with `CHECK (length(col) >= 0)`, which holds for every value and
    only records the word (DuckDB's VARCHAR is text too)."""
    kind = node.args.get("kind")
    n = declared_length(kind)
    blank = n is None and (n := char_length(kind)) is not None
    unsized = n is None and _is_unsized_varchar(kind)
    if n is None and not unsized:
        return
    schema = node.parent
    create = schema.parent if isinstance(schema, exp.Schema) else None
    if not isinstance(create, exp.Create) or create.kind != "TABLE":
        return  # ALTER TABLE ADD COLUMN: DuckDB rejects constraints there
    constraints = node.args.get("constraints") or []
    if any(isinstance(c.args.get("kind"), exp.ComputedColumnConstraint) for c in constraints):
        return  # DuckDB rejects constraints on generated columns
    column: exp.Expr = exp.Column(this=node.this.copy())
    if blank:
        column = exp.Anonymous(this="rtrim", expressions=[column, exp.Literal.string(" ")])
    length = exp.Anonymous(this="length", expressions=[column])
    test = (
        exp.GTE(this=length, expression=exp.Literal.number(0))
        if unsized
        else exp.LTE(this=length, expression=exp.Literal.number(n))
    )
    node.set("kind", _unsized())
    node.append("constraints", exp.ColumnConstraint(kind=exp.CheckColumnConstraint(this=test)))


def without_word_checks(sql: str) -> str:
    """A CREATE TABLE's SQL without the CHECKs recording char(n) / varchar: where no CHECK
    can be kept (a DuckLake), those columns are plain text, as before."""
    return _WORD_CHECKS.sub("", sql) if " CHECK (LENGTH(" in sql else sql


def _is_unsized_varchar(dtype: exp.Expr | None) -> bool:
    return (
        isinstance(dtype, exp.DataType)
        and dtype.this is exp.DType.VARCHAR
        and not dtype.expressions
        and not dtype.args.get("nested")
    )


def char_length(dtype: exp.Expr | None) -> int | None:
    """n of a scalar `char(n)` / `character(n)` / `bpchar(n)` type node (bare char: 1)."""
    if not isinstance(dtype, exp.DataType) or dtype.this not in (exp.DType.CHAR, exp.DType.BPCHAR):
        return None
    if not dtype.expressions:
        return 1 if dtype.this is exp.DType.CHAR else None  # bare bpchar: no limit
    as_varchar = exp.DataType(this=exp.DType.VARCHAR, expressions=dtype.expressions)
    return declared_length(as_varchar)


def cast(node: exp.Cast, to: exp.DataType) -> bool:
    """`CAST(x AS varchar(n))` -> `left(CAST(x AS VARCHAR), n)`, `CAST(x AS char(n))` ->
    `rtrim(left(CAST(x AS VARCHAR), n), ' ')`; whether it was one."""
    if type(node) is not exp.Cast:  # (TRY_CAST etc. left as they are)
        return False
    n, blank = declared_length(to), False
    if n is None:
        n, blank = char_length(to), True
    if n is None:
        return False
    inner = exp.Cast(this=node.this, to=_unsized())
    cut: exp.Expr = exp.Anonymous(this="left", expressions=[inner, exp.Literal.number(n)])
    if blank:
        cut = exp.Anonymous(this="rtrim", expressions=[cut, exp.Literal.string(" ")])
    node.replace(cut)
    return True
