"""INSERT ... ON CONFLICT (cols) whose source may propose several rows: PostgreSQL's
rules for rows that share a conflict key, in the statement DuckDB runs.

PostgreSQL takes the proposed rows in order: under DO NOTHING a row whose key an earlier
row of the same command already wrote is skipped; under DO UPDATE it is an error (21000
`ON CONFLICT DO UPDATE command cannot affect row a second time`); a row whose key has a
NULL never conflicts and is always inserted. DuckDB 1.5 compares the rows of one
statement among themselves with NULL equal to NULL, keeps one of each key (not always
the first) and drops the others without a word -- rows lost. So the source is wrapped:

    SELECT cols FROM (SELECT *, row_number() OVER () AS __hati_n
                      FROM (<source>) AS __hati_src(cols)) AS __hati_rows
    QUALIFY <each key's first row / error(...)> ORDER BY __hati_n

DO NOTHING keeps the first row of each key; DO UPDATE fails with PostgreSQL's words
(error() raises them; proxy/db/upsert_errors.py gives them their SQLSTATE and HINT).
Several rows with a NULL in the key cannot be written here as PostgreSQL does (DuckDB
would keep one): 0A000, never a silent loss. The rows keep their order (identity and
serial values are drawn in it, RETURNING answers in it).

Only for a conflict target of plain columns the inserted columns include (a column list,
or the table's columns from the catalog hints); a source of one VALUES row needs none
(the hot path is untouched). Pure.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_hints import ColumnHints
from transpiler.dialects import DUCKDB

SECOND_TIME = "ON CONFLICT DO UPDATE command cannot affect row a second time"
NULL_KEYS = "INSERT ... ON CONFLICT with several rows whose conflict key is NULL is not supported"


def rewrite(tree: exp.Insert, hints: ColumnHints | None) -> None:
    """Wrap the source of a multi-row upsert (in place) as described above."""
    conflict = tree.args.get("conflict")
    source = tree.expression
    if not isinstance(conflict, exp.OnConflict) or source is None:
        return
    if isinstance(source, exp.Values) and len(source.expressions) < 2:
        return
    if conflict.args.get("constraint") is not None or tree.args.get("by_name"):
        return
    target = tree.this
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions if isinstance(c, exp.Identifier | exp.Column)]
        if len(columns) != len(target.expressions):
            return
    elif isinstance(target, exp.Table) and hints is not None:
        columns = list(hints.column_order(target.name.lower()) or ())
    else:
        return
    lowered = [c.lower() for c in columns]
    keys = []
    for key in conflict.args.get("conflict_keys") or []:
        column = key.this if isinstance(key, exp.Ordered) else key
        if (
            not isinstance(column, exp.Column | exp.Identifier)
            or column.name.lower() not in lowered
        ):
            return
        keys.append(_quoted(columns[lowered.index(column.name.lower())]))
    if not keys or not columns:
        return
    update = "UPDATE" in conflict.text("action").upper()
    names = ", ".join(_quoted(c) for c in columns)
    by_key = ", ".join(keys)
    null_key = " OR ".join(f"{k} IS NULL" for k in keys)
    nulls = f"sum(CASE WHEN {null_key} THEN 1 ELSE 0 END) OVER ()"
    later = (
        f"error('{SECOND_TIME}')"
        if update
        else f"row_number() OVER (PARTITION BY {by_key} ORDER BY __hati_n) = 1"
    )
    keep = (
        f"CASE WHEN {nulls} > 1 THEN error('{NULL_KEYS}') WHEN {null_key} THEN true "
        f"WHEN count(*) OVER (PARTITION BY {by_key}) > 1 THEN {later} ELSE true END"
    )
    wrapped = exp.maybe_parse(
        f"SELECT {names} FROM (SELECT *, row_number() OVER () AS __hati_n "
        f"FROM __hati_source AS __hati_src({names})) AS __hati_rows "
        f"QUALIFY {keep} ORDER BY __hati_n",
        dialect=DUCKDB,
    )
    placeholder = wrapped.find(exp.Table)
    assert placeholder is not None
    inner = source.this if isinstance(source, exp.Subquery) and not source.alias else source
    placeholder.replace(
        exp.Subquery(
            this=inner.copy(),
            alias=exp.TableAlias(
                this="__hati_src", columns=[exp.to_identifier(c, quoted=True) for c in columns]
            ),
        )
    )
    tree.set("expression", wrapped)


def _quoted(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql(dialect=DUCKDB)
