"""Catalog columns of type regproc compared with an oid number.

PostgreSQL's regproc columns (pg_type.typreceive, pg_operator.oprcode ...) are function
oids; 0 means "no function" and prints as '-'. The catalog here holds them as the
function's name (VARCHAR; no function: NULL or '-'), which DuckDB cannot compare with an
integer: ADBC's PostgreSQL driver asks `WHERE typreceive != 0 OR typsend != 0` when it
connects. A comparison of such a column, by name, with the literal 0 becomes a test for
"no function"; other oid numbers name no function here and are left as written.
"""

from __future__ import annotations

from sqlglot import exp

# The regproc columns of pg_catalog (PostgreSQL 15).
REGPROC_COLUMNS = frozenset(
    {
        "typinput",
        "typoutput",
        "typreceive",
        "typsend",
        "typmodin",
        "typmodout",
        "typanalyze",
        "typsubscript",
        "prosupport",
        "oprcode",
        "oprrest",
        "oprjoin",
        "aggfnoid",
        "aggtransfn",
        "aggfinalfn",
        "aggcombinefn",
        "aggserialfn",
        "aggdeserialfn",
        "aggmtransfn",
        "aggminvtransfn",
        "aggmfinalfn",
        "rngcanonical",
        "rngsubdiff",
    }
)


def rewrite(node: exp.EQ | exp.NEQ) -> None:
    """`col = 0` -> `COALESCE(col, '-') = '-'` (and `<>`) for a regproc column `col`."""
    left, right = node.this, node.expression
    if _is_zero(left):
        left, right = right, left
    if not (
        isinstance(left, exp.Column) and left.name.lower() in REGPROC_COLUMNS and _is_zero(right)
    ):
        return
    none = exp.Literal.string("-")
    node.set("this", exp.Coalesce(this=left.copy(), expressions=[none.copy()]))
    node.set("expression", none)


def _is_zero(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_int and int(node.name) == 0
