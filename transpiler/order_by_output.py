"""`ORDER BY name` where `name` is an output column's name: PostgreSQL sorts by that
output column before it looks at the input columns (SQL92 rule, parse_clause.c
findTargetlistEntrySQL92), and an output column named by PostgreSQL's rules counts as
much as an alias: `SELECT m::text FROM t ORDER BY m` sorts the text. DuckDB names that
column `CAST(m AS VARCHAR)`, so its ORDER BY m finds the input column and sorts numbers.

`rewrite(tree)` turns each such ORDER BY item into the output column's position; two
output columns of that name with different expressions are 42702 `ORDER BY "m" is
ambiguous`, as in PostgreSQL. It runs on the PostgreSQL tree before the other rewrites
(the names are PostgreSQL's, colnames.figure). Pure; changes `tree` in place.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.colnames import figure, head_select
from transpiler.errors import TranspileError


def rewrite(tree: exp.Expr, text: str | None = None) -> None:
    for node in list(tree.find_all(exp.Select, exp.SetOperation)):
        order = node.args.get("order")
        # a set operation's ORDER BY names its first branch's output columns
        select = head_select(node) if isinstance(node, exp.SetOperation) else node
        if order is None or select is None:
            continue
        distinct = select.args.get("distinct")
        if isinstance(distinct, exp.Distinct) and distinct.args.get("on") is not None:
            continue  # DISTINCT ON ties ORDER BY to its expressions: left as written
        _by_position(order, select, text)


def _by_position(order: exp.Order, select: exp.Select, text: str | None) -> None:
    if any(p.find(exp.Star) is not None and not p.find(exp.Count) for p in select.expressions):
        return  # `*` expands to names unknown here (one may be the name, or two: 42702)
    names = [_output_name(p, text) for p in select.expressions]
    if not any(names):
        return
    for item in order.expressions:
        column = item.this if isinstance(item, exp.Ordered) else None
        if not isinstance(column, exp.Column) or column.table:
            continue
        wanted = _folded(column.this)
        found = [i for i, n in enumerate(names) if n == wanted]
        if not found:
            continue
        matched = [_unaliased(select.expressions[i]) for i in found]
        plain = all(isinstance(e, exp.Column) for e in matched)  # t.id, id: DuckDB's call
        if len(set(matched)) > 1 and not plain:
            raise TranspileError("42702", f'ORDER BY "{wanted}" is ambiguous')
        proj = select.expressions[found[0]]
        if isinstance(proj, exp.Alias | exp.Column):
            continue  # DuckDB finds an alias or a column itself
        item.set("this", exp.Literal.number(found[0] + 1))


def _output_name(proj: exp.Expr, text: str | None) -> str | None:
    if isinstance(proj, exp.Alias):
        return _folded(proj.args["alias"])
    if isinstance(proj, exp.Column):
        return _folded(proj.this) if isinstance(proj.this, exp.Identifier) else None
    if isinstance(proj, exp.Star):
        return None
    if isinstance(proj, exp.Cast | exp.TryCast) and isinstance(proj.this, exp.Column):
        return _folded(proj.this.this)  # `m::text` is m (figure keeps the case as written)
    return figure(proj, text)


def _unaliased(proj: exp.Expr) -> exp.Expr:
    return proj.this if isinstance(proj, exp.Alias) else proj


def _folded(ident: exp.Expr) -> str:
    """An identifier as PostgreSQL folds it: quoted as written, else lower case."""
    if isinstance(ident, exp.Identifier):
        return ident.this if ident.quoted else ident.this.lower()
    return ident.name.lower()
