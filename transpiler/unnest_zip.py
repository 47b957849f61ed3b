"""`unnest(a, b, ...) [WITH ORDINALITY] AS t(x, y[, n])` in FROM: PostgreSQL's
multi-argument unnest walks the arrays side by side (the shorter padded with NULLs).
DuckDB's unnest takes one list; several unnests in one SELECT list are zipped the same
way, so the call becomes `(SELECT unnest(a) AS x, unnest(b) AS y[, unnest(range(1,
greatest(len(a), len(b)) + 1)) AS n]) AS t` (a lateral subquery: DuckDB finds the outer
columns). Django's inspectdb sends `unnest(i.indkey, i.indoption) WITH ORDINALITY`.
"""

from __future__ import annotations

from sqlglot import exp


def rewrite(node: exp.Unnest) -> None:
    """Rewrite a multi-argument unnest in place (one argument: left alone)."""
    arrays = node.expressions
    if len(arrays) < 2 or not isinstance(node.parent, exp.From | exp.Join):
        return
    alias = node.args.get("alias")
    names = [c.name for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
    offset = node.args.get("offset")
    # Unnamed columns are all `unnest`, as in PostgreSQL (DuckDB suffixes the repeats).
    named = bool(names)
    names += ["unnest"] * (len(arrays) - len(names))
    columns: list[exp.Expr] = [
        exp.alias_(exp.Unnest(expressions=[a.copy()]), names[i], quoted=True)
        for i, a in enumerate(arrays)
    ]
    out_names = names[: len(arrays)] if named else []
    if offset is not None and offset is not False:
        ordinal = offset.name if isinstance(offset, exp.Identifier) else "ordinality"
        longest = exp.Greatest(
            this=exp.Length(this=arrays[0].copy()),
            expressions=[exp.Length(this=a.copy()) for a in arrays[1:]],
        )
        steps = exp.Anonymous(
            this="range",
            expressions=[
                exp.Literal.number(1),
                exp.Add(this=longest, expression=exp.Literal.number(1)),
            ],
        )
        columns.append(exp.alias_(exp.Unnest(expressions=[steps]), ordinal, quoted=True))
        if named:
            out_names.append(ordinal)
    table_name = alias.name if isinstance(alias, exp.TableAlias) and alias.name else "unnest"
    subquery = exp.Subquery(
        this=exp.Select(expressions=columns),
        alias=exp.TableAlias(
            this=exp.to_identifier(table_name),
            columns=[exp.to_identifier(n) for n in out_names],
        ),
    )
    node.replace(subquery)
