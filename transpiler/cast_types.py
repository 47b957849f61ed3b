"""Which result columns are a cast to varchar / varchar(n), typed as PostgreSQL types them.

DuckDB's VARCHAR keeps no length, so `x::varchar(5)` would be described as text (25);
PostgreSQL describes it as varchar (1043) with typmod n + 4, and an unsized
`x::varchar` as varchar with typmod -1. A client reads the length from the typmod
(JDBC's getPrecision, psycopg's internal_size). Only a projection that is the cast
itself (aliased or not) is typed; anything around it keeps DuckDB's type.

A cast to char(n) is bpchar (1042) with typmod n + 4, and its value is padded with
blanks to n there, as PostgreSQL prints it: the cast itself drops trailing blanks
(varchar_length.cast: so length, = and || answer as bpchar's), and only a result
column that is the cast shows them (`rpad`); inside a subquery or an expression the
value stays unpadded.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.name_types import select_list
from transpiler.varchar_length import char_length

VARCHAR_OID, BPCHAR_OID = 1043, 1042
CastOutputs = tuple[tuple[int, int] | None, ...]


def outputs(tree: exp.Expr) -> CastOutputs | None:
    """Per result column, (type oid, typmod) of a cast to varchar(n) / varchar, or None;
    None when no column is such a cast."""
    projections = select_list(tree)
    if projections is None:
        return None
    out = tuple(_declared(p.unalias()) or _padded(p) for p in projections)
    return out if any(d is not None for d in out) else None


def _padded(proj: exp.Expr) -> tuple[int, int] | None:
    """A char(n) cast projection: wrapped in rpad(.., n) (its column name is kept: the
    alias, or colnames' name computed before); (1042, n + 4)."""
    cast = proj.unalias()
    if type(cast) is not exp.Cast:
        return None
    n = char_length(cast.to)
    if n is None:
        return None
    pad = exp.Anonymous(this="rpad", expressions=[cast.copy(), exp.Literal.number(n)])
    pad.append("expressions", exp.Literal.string(" "))
    cast.replace(pad)
    return (BPCHAR_OID, n + 4)


def _declared(node: exp.Expr) -> tuple[int, int] | None:
    if not isinstance(node, exp.Cast) or not isinstance(node.to, exp.DataType):
        return None
    to = node.to
    if to.this != exp.DataType.Type.VARCHAR:
        return None
    params = to.expressions
    if not params:
        return (VARCHAR_OID, -1)
    if len(params) != 1:
        return None
    size = params[0].this if isinstance(params[0], exp.DataTypeParam) else params[0]
    if not isinstance(size, exp.Literal) or size.is_string or not size.this.isdigit():
        return None
    return (VARCHAR_OID, int(size.this) + 4)
