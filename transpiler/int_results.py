"""Result columns PostgreSQL types integer where DuckDB's function answers BIGINT.

`length` / `char_length` / `octet_length` / `bit_length` and `strpos` / `position` are
int4 in PostgreSQL, BIGINT in DuckDB. Drivers that parse by type read an int8 as a
string (node-postgres, postgres.js) and an int4 as a number, so a query's result
column of such a call is cast to INTEGER. Only the select list's top level: inside
expressions the type does not show, and a CHECK or an index keeps its text.

`sum` of an integer / smallint is bigint in PostgreSQL; DuckDB's is HUGEINT, which goes out
as numeric (a client got Decimal('15'), not 15). Where the argument is surely such an
integer -- a column the catalog hints type so, an integer literal, a CASE of integer
literals (`sum(CASE WHEN ok THEN 1 ELSE 0 END)`), a cast to int -- the sum (also as a
window) is cast to BIGINT. A bigint's sum stays numeric, as in PostgreSQL.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.colnames import head_select
from transpiler.column_hints import INT, ColumnHints, table_of

_NODES = (exp.Length, exp.BitLength, exp.StrPosition)
_NAMES = frozenset({"octet_length", "strpos"})


_SMALL_INTS = (exp.DataType.Type.INT, exp.DataType.Type.SMALLINT, exp.DataType.Type.TINYINT)


def rewrite(tree: exp.Expr, hints: ColumnHints | None = None) -> None:
    """Cast the select list's integer-in-PostgreSQL calls (in place)."""
    select = head_select(tree)
    if select is None:
        return
    for proj in select.expressions:
        node = proj.this if isinstance(proj, exp.Alias) else proj
        if isinstance(node, _NODES) or (
            isinstance(node, exp.Anonymous) and node.name.lower() in _NAMES
        ):
            node.replace(exp.cast(node.copy(), exp.DType.INT))
        total = node.this if isinstance(node, exp.Window) else node
        if isinstance(total, exp.Sum) and _small_int(total.this, hints):
            node.replace(exp.cast(node.copy(), exp.DType.BIGINT))


def _small_int(node: exp.Expr | None, hints: ColumnHints | None) -> bool:
    """Whether `node` is surely an integer / smallint (PostgreSQL sums it as bigint)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Literal):
        return not node.is_string and node.name.isdigit() and int(node.name) < 2**31
    if isinstance(node, exp.Neg):
        return _small_int(node.this, hints)
    if isinstance(node, exp.Cast):
        return isinstance(node.to, exp.DataType) and node.to.this in _SMALL_INTS
    if isinstance(node, exp.Case):
        values = [i.args.get("true") for i in node.args.get("ifs") or []]
        values.append(node.args.get("default"))
        known = [v for v in values if not isinstance(v, exp.Null) and v is not None]
        return bool(known) and all(_small_int(v, hints) for v in known)
    if isinstance(node, exp.Column) and hints is not None:
        table = table_of(node, hints)
        kinds = hints.columns(table) if table is not None else None
        return bool(kinds) and kinds.get(node.name.lower()) == INT
    return False
