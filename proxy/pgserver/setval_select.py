"""`SELECT setval(<computed name>, <value>, <is_called>) FROM t`: DuckDB draws from a
sequence only when its name is a constant, so a setval whose name (or value) is computed
per row, as Django's sequence reset after loaddata sends
(`setval(pg_get_serial_sequence('"t"', 'id'), coalesce(max("id"), 1), max("id") IS NOT
null) FROM "t"`), fails. The arguments are read first with the same FROM / WHERE, then
setval runs once per row on constants, in one SELECT that answers what PostgreSQL would.
Constant names take the same path: a setval that moves a sequence back needs the
sequence made again first (sequence_restart.py), which no SQL macro can do."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from proxy.pgserver import alter_rebuild, sequence_restart


def _literal(value: Any) -> exp.Expr:
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def run_setval_rows(
    cur: Any, sql: str, params: list, in_block: bool = True
) -> list[tuple[Any, ...]] | None:
    """Run `sql` argument-first if it is a SELECT whose only output is a setval call;
    its rows of arguments (name, value[, is_called]) then, None (nothing run) otherwise."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1:
        return None
    out = tree.expressions[0]
    call = out.this if isinstance(out, exp.Alias) else out
    if not (isinstance(call, exp.Anonymous) and call.name.lower() == "setval"):
        return None
    if not 2 <= len(call.expressions) <= 3 or any(
        n.name.lower() == "setval" for a in call.expressions for n in a.find_all(exp.Anonymous)
    ):
        return None
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
    with alter_rebuild.own_transaction(cur, in_block):
        for row in rows:  # a sequence moved back (or far) is made again first (sequence_restart)
            if row[0] is not None and row[1] is not None:
                called = True if len(row) < 3 else row[2]
                if called is not None:
                    back = sequence_restart.needs_recreate(cur, str(row[0]), int(row[1]), called)
                    if back is not None:
                        schema, seq, start = back
                        changes = None if start is None else {"start": start}
                        sequence_restart.recreate(cur, schema, seq, changes)
        values = cur.execute(final).fetchall()
    # the answer read again from constants: a commit of our own ends the result above
    answer = " UNION ALL ".join(
        exp.select(exp.alias_(exp.cast(_literal(v[0]), "BIGINT"), name)).sql(dialect="duckdb")
        for v in values
    )
    cur.execute(answer or final)
    return rows
