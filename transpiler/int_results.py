"""Result columns PostgreSQL types integer where DuckDB's function answers BIGINT.

`length` / `char_length` / `octet_length` / `bit_length` and `strpos` / `position` are
int4 in PostgreSQL, BIGINT in DuckDB. Drivers that parse by type read an int8 as a
string (node-postgres, postgres.js) and an int4 as a number, so a query's result
column of such a call is cast to INTEGER. Only the select list's top level: inside
expressions the type does not show, and a CHECK or an index keeps its text.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.colnames import head_select

_NODES = (exp.Length, exp.BitLength, exp.StrPosition)
_NAMES = frozenset({"octet_length", "strpos"})


def rewrite(tree: exp.Expr) -> None:
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
