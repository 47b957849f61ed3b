"""Which result columns of a query PostgreSQL types `json` rather than `jsonb`.

DuckDB has one JSON type; PostgreSQL has two, and drivers treat them differently
(Django reads jsonb as text and decodes it itself, psycopg decodes json). The server
reports a DuckDB JSON result column as jsonb (OID 3802), what ORMs and vector stores
declare, unless this says the expression is typed `json` in PostgreSQL: a cast to
json, a json_* / to_json / row_to_json / array_to_json call, or `->`, `#>`, `||`
applied to such an expression. Table columns count as jsonb (DuckDB does not keep
which of the two a column was declared as).
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.colnames import head_select

_JSON_FUNCTIONS = frozenset(
    {
        "json_build_object",
        "json_build_array",
        "json_object",
        "json_agg",
        "json_object_agg",
        "to_json",
        "row_to_json",
        "array_to_json",
        "json_extract_path",
        "json_strip_nulls",
        "json_array_elements",
        "json_each",
    }
)
_JSON_NODES = (exp.JSONArrayAgg, exp.JSONObject, exp.JSONObjectAgg, exp.JSONArray)


def outputs(tree: exp.Expr) -> tuple[bool, ...] | None:
    """Per result column of a query, whether PostgreSQL types it `json`; None when no
    column is (or the select list expands a star)."""
    select = head_select(tree)
    if select is None:
        return None
    out = []
    for proj in select.expressions:
        if isinstance(proj, exp.Star) or (isinstance(proj, exp.Column) and proj.is_star):
            return None
        out.append(is_json(proj))
    return tuple(out) if any(out) else None


def is_json(node: exp.Expr) -> bool:
    """Whether PostgreSQL types the value of `node` json (not jsonb)."""
    while isinstance(node, (exp.Alias, exp.Paren)):
        node = node.this
    if isinstance(node, exp.Cast):
        to = node.args.get("to")
        return isinstance(to, exp.DataType) and to.this is exp.DataType.Type.JSON
    if isinstance(node, (exp.JSONExtract, exp.JSONBExtract, exp.DPipe, exp.Sub)):
        return is_json(node.this)
    if isinstance(node, _JSON_NODES):
        return True
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in _JSON_FUNCTIONS
    if isinstance(node, exp.Func):
        return node.sql_name().lower() in _JSON_FUNCTIONS
    return False
