"""`FROM unnest(a, b, ...)`: PostgreSQL's multi-argument UNNEST zips its arrays into rows
(the shorter ones padded with NULLs). DuckDB's UNNEST in FROM takes one list, but a
SELECT list of several `unnest()` calls zips them the same way, padding with NULLs, so

    FROM unnest(a, b) [AS u(x, y)]  ->  FROM (SELECT unnest(a), unnest(b)) AS u(x, y)

Django's bulk_create sends `INSERT INTO t (a, b) SELECT * FROM UNNEST(%s::int[],
%s::text[]) RETURNING t.id`. Without a column list the columns are named `unnest` as in
PostgreSQL (DuckDB then suffixes repeats: unnest, unnest_1). WITH ORDINALITY is left
as written.
"""

from __future__ import annotations

from sqlglot import exp


def rewrite(node: exp.Unnest) -> None:
    """Rewrite a multi-argument `unnest(...)` relation in place (see the module docstring)."""
    args = node.expressions
    if (
        len(args) < 2
        or node.args.get("offset")
        or not isinstance(node.parent, (exp.From, exp.Join))
    ):
        return
    alias = node.args.get("alias")
    names = [c.copy() for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
    table = alias.this.copy() if isinstance(alias, exp.TableAlias) and alias.this else None
    if names and len(names) != len(args):
        return  # PostgreSQL refuses it too; let DuckDB say so
    select = exp.select(
        *(
            exp.alias_(exp.Unnest(expressions=[arg.copy()]), names[i] if names else "unnest")
            for i, arg in enumerate(args)
        )
    )
    node.replace(
        exp.Subquery(
            this=select,
            alias=exp.TableAlias(this=table or exp.to_identifier("unnest"), columns=names),
        )
    )
