"""Snowflake constructs sqlglot does not carry over to DuckDB by itself.

`LATERAL FLATTEN(input => expr) f` (sqlglot renders `, CROSS JOIN UNNEST(input => ...)`,
which DuckDB rejects, and cannot unnest a JSON value anyway) becomes

    CROSS JOIN LATERAL (SELECT CAST(UNNEST(CAST(expr AS JSON[])) AS VARIANT) AS value,
                               UNNEST(RANGE(LEN(CAST(expr AS JSON[])))) AS index) AS f

so `f.value` is a VARIANT (`f.value::STRING` gives the bare string, as in Snowflake)
and `f.index` is 0-based. Other FLATTEN columns (SEQ, KEY, PATH, THIS) are not provided.
"""

from __future__ import annotations

from functools import lru_cache

from sqlglot import exp

from transpiler.dialects import DUCKDB

_TEMPLATE = (
    "SELECT CAST(UNNEST(CAST(:input AS JSON[])) AS VARIANT) AS value, "
    "UNNEST(RANGE(LEN(CAST(:input AS JSON[])))) AS index"
)


@lru_cache(maxsize=1)
def _template() -> exp.Select:
    return DUCKDB.parse(_TEMPLATE)[0]


def rewrite(nodes: list[exp.Expr]) -> None:
    """Rewrite LATERAL FLATTEN among `nodes` (a tree snapshot) in place."""
    for lateral in nodes:
        if not isinstance(lateral, exp.Lateral):
            continue
        explode = lateral.this
        if not isinstance(explode, exp.Explode):
            continue
        source = explode.this
        if isinstance(source, exp.Kwarg):
            source = source.expression
        body = exp.replace_placeholders(_template().copy(), input=source)
        alias = lateral.args.get("alias")
        name = alias.this.copy() if alias and alias.this else exp.to_identifier("f")
        new = exp.Lateral(this=exp.Subquery(this=body), alias=exp.TableAlias(this=name))
        join = lateral.parent
        if isinstance(join, exp.Join):
            join.set("kind", "CROSS")
        lateral.replace(new)
