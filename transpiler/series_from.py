"""`FROM generate_series(a, b[, step]) [AS t[(c)]]` with constant integer bounds.

PostgreSQL types the series integer when its arguments are (DuckDB's is BIGINT, which
node-postgres and postgres.js read as a string), and names its one column c, else t (a
function alias names the column too: postgres.js's `from generate_series(1, 4) as x`
gives rows `{x: 1}`), else generate_series. The call becomes
`FROM (SELECT CAST(generate_series AS INTEGER) AS c FROM generate_series(a, b)) AS t`.
Only constant arguments (a column of an outer table would need the lateral join kept)
and no WITH ORDINALITY; bounds outside integer's range stay bigint, as in PostgreSQL.
"""

from __future__ import annotations

from sqlglot import exp

_INT4 = 2**31
_INT_TYPES = (exp.DType.INT, exp.DType.SMALLINT, exp.DType.TINYINT)
_NAME = "generate_series"


def _int4(arg: exp.Expr | None) -> bool:
    """A constant PostgreSQL types integer (int4): a literal in range, or a cast to it."""
    if isinstance(arg, exp.Neg):
        arg = arg.this
    if isinstance(arg, exp.Paren):
        return _int4(arg.this)
    if isinstance(arg, exp.Cast):
        return arg.to.this in _INT_TYPES and isinstance(arg.this, exp.Literal)
    return (
        isinstance(arg, exp.Literal)
        and not arg.is_string
        and arg.this.isdigit()
        and int(arg.this) < _INT4
    )


def rewrite(node: exp.Table) -> None:
    """Wrap `node` (a FROM item) when it is such a generate_series call, in place."""
    fn = node.this
    if not isinstance(fn, exp.GenerateSeries) or node.args.get("ordinality"):
        return
    bounds = [fn.args.get("start"), fn.args.get("end")]
    if fn.args.get("step") is not None:
        bounds.append(fn.args["step"])
    if not all(_int4(b) for b in bounds):
        return
    alias = node.args.get("alias")
    table = alias.name if alias is not None and alias.name else _NAME
    column = table
    if alias is not None and alias.columns:
        if len(alias.columns) != 1:
            return
        column = alias.columns[0].name
    value = exp.cast(exp.column(_NAME), exp.DType.INT)
    query = exp.select(exp.alias_(value, column, quoted=True)).from_(exp.Table(this=fn.copy()))
    node.replace(
        exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(table, quoted=True)))
    )
