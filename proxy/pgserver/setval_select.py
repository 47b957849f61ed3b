"""`SELECT setval(<computed name>, <value>, <is_called>) FROM t`: DuckDB draws from a
sequence only when its name is a constant, so a setval whose name (or value) is computed
per row, as Django's sequence reset after loaddata sends
(`setval(pg_get_serial_sequence('"t"', 'id'), coalesce(max("id"), 1), max("id") IS NOT
null) FROM "t"`), fails. The arguments are read first with the same FROM / WHERE, then
setval runs once per row on constants, in one SELECT that answers what PostgreSQL would."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp


def _literal(value: Any) -> exp.Expr:
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def run_setval_rows(cur: Any, sql: str, params: list) -> bool:
    """Run `sql` argument-first if it is a SELECT whose only output is a setval call on a
    computed sequence name; False (nothing run) otherwise."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return False
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1:
        return False
    out = tree.expressions[0]
    call = out.this if isinstance(out, exp.Alias) else out
    if not (isinstance(call, exp.Anonymous) and call.name.lower() == "setval"):
        return False
    if not 2 <= len(call.expressions) <= 3 or any(
        n.name.lower() == "setval" for a in call.expressions for n in a.find_all(exp.Anonymous)
    ):
        return False
    if isinstance(call.expressions[0], exp.Literal):
        return False  # a constant name: the setval macro does it in one statement
    args = tree.copy()
    args.set("expressions", [a.copy() for a in call.expressions])
    text = args.sql(dialect="duckdb")
    rows = (cur.execute(text, params) if params else cur.execute(text)).fetchall()
    name = out.alias if isinstance(out, exp.Alias) else "setval"
    parts = [
        exp.select(
            exp.alias_(exp.Anonymous(this="setval", expressions=[_literal(v) for v in row]), name)
        ).sql(dialect="duckdb")
        for row in rows
    ]
    final = " UNION ALL ".join(parts) or f'SELECT CAST(NULL AS BIGINT) AS "{name}" WHERE false'
    cur.execute(final)
    return True
