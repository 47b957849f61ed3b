"""PostgreSQL's jsonb operators and functions on DuckDB's JSON.

    a @> b, a <@ b        -> json_contains(a, b), json_contains(b, a)  (JSON operands)
    a ? k, a ?| ks, a ?& ks -> __hati_jsonb_exists[_any|_all](a, k / ks)
    a #> path, a #>> path -> json_extract[_string](a, '/p/a/t/h')  (a JSON pointer)
    a || b, a - k         -> __hati_jsonb_concat(a, b), __hati_jsonb_delete(a, k)
                             (when an operand is JSON)
    a = b, a < b, ...     -> __hati_json_cmp(a, b, op) (both JSON): numbers compare as
                             numbers, strings as strings; values of different kinds
                             give NULL (PostgreSQL orders them by kind)
    jsonb_build_object / json_build_object -> json_object(k::VARCHAR, v, ...)
    jsonb_build_array / json_build_array   -> json_array(...)
    jsonb_agg / json_agg                   -> to_json(list(...))
    a -> k, a ->> k inside a call's arguments -> json_extract[_string](a, '$.k')
    jsonb_typeof / json_typeof             -> __hati_jsonb_typeof
    to_jsonb -> to_json; jsonb_array_length -> json_array_length
    jsonb_array_elements(j) / _text(j)     -> unnest(...) (select list or FROM)
    jsonb_object_keys(j)                   -> unnest(json_keys(j))
    jsonb_path_match(j, 'path'::jsonpath, vars) -> __hati_jsonb_path_match (the
        `$.key OP $var` comparisons langchain-postgres filters send)

`@>`, `<@`, `||` and `-` also mean array containment, concatenation and subtraction:
they are rewritten only when an operand is JSON for sure (a cast to json / jsonb, a JSON
function or operator, a column the catalog hints say is JSON, or a parameter beside
one). The macros live in proxy/db/catalog/55_jsonb.sql.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from transpiler.any_array import parse_array_literal
from transpiler.column_hints import JSON, ColumnHints, table_of
from transpiler.literals import string_value
from transpiler.treeutil import attached

_JSON_TYPES = (exp.DataType.Type.JSON, exp.DataType.Type.JSONB)
_JSON_RESULT = (exp.JSONExtract, exp.JSONBExtract, exp.JSONArrayAgg, exp.JSONObject)
_KEYS = {
    exp.JSONBContainsTopKey: "__hati_jsonb_exists",
    exp.JSONBContainsAnyTopKeys: "__hati_jsonb_exists_any",
    exp.JSONBContainsAllTopKeys: "__hati_jsonb_exists_all",
}
# Functions (before or after this rewrite) whose value is JSON.
_JSON_VALUED = frozenset(
    {
        "json", "to_json", "to_jsonb", "json_extract", "json_object", "json_array",
        "json_group_array", "json_merge_patch", "json_build_object", "jsonb_build_object",
        "json_build_array", "jsonb_build_array", "json_agg", "jsonb_agg", "jsonb_set",
        "json_extract_path", "jsonb_extract_path", "__hati_jsonb_concat",
        "__hati_jsonb_delete",
    }
)  # fmt: skip
# jsonb comparisons: numbers as numbers (DuckDB compares JSON as text: '100' < '35').
_COMPARISONS: dict[type, str] = {
    exp.EQ: "==",
    exp.NEQ: "!=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
_SIMPLE_RENAMES = {
    "to_jsonb": "to_json",
    "jsonb_typeof": "__hati_jsonb_typeof",
    "json_typeof": "__hati_jsonb_typeof",
    "jsonb_build_array": "json_array",
    "jsonb_path_match": "__hati_jsonb_path_match",
    "json_build_array": "json_array",
}
_OBJECT_BUILDERS = frozenset({"jsonb_build_object", "json_build_object"})
_ELEMENTS = frozenset({"jsonb_array_elements", "json_array_elements"})
_ELEMENTS_TEXT = frozenset({"jsonb_array_elements_text", "json_array_elements_text"})
_KEYS_OF = frozenset({"jsonb_object_keys", "json_object_keys"})
_ALL_FUNCTIONS = (
    frozenset(_SIMPLE_RENAMES)
    | _OBJECT_BUILDERS
    | _ELEMENTS
    | _ELEMENTS_TEXT
    | _KEYS_OF
    | {"jsonb_agg", "jsonb_array_length"}
)


def _call(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def is_json(node: exp.Expr | None, hints: ColumnHints | None) -> bool:
    """Whether `node` is a JSON value for sure."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Cast):
        to = node.args.get("to")
        return isinstance(to, exp.DataType) and to.this in _JSON_TYPES
    if isinstance(node, _JSON_RESULT):
        return True
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in _JSON_VALUED
    if isinstance(node, exp.Column) and hints is not None:
        table = table_of(node, hints)
        cols = hints.columns(table) if table is not None else None
        return bool(cols) and cols.get(node.name.lower()) == JSON
    return False


def _param(node: exp.Expr | None) -> bool:
    while isinstance(node, exp.Paren):
        node = node.this
    return isinstance(node, (exp.Parameter, exp.Placeholder))


def _json_pair(a: exp.Expr, b: exp.Expr, hints: ColumnHints | None) -> bool:
    ja, jb = is_json(a, hints), is_json(b, hints)
    return (ja and (jb or _param(b) or string_value(b) is not None)) or (
        jb and (_param(a) or string_value(a) is not None)
    )


def _assignment(node: exp.Expr) -> bool:
    """`col = value` of UPDATE ... SET or ON CONFLICT DO UPDATE SET: an EQ node in sqlglot,
    but an assignment, not a comparison."""
    return isinstance(node.parent, (exp.Update, exp.OnConflict)) and node.arg_key == "expressions"


def _pointer(path: exp.Expr) -> exp.Expr:
    text = string_value(path)
    items = parse_array_literal(text) if text is not None else None
    if items is not None and None not in items:
        escaped = [s.replace("~", "~0").replace("/", "~1") for s in items]  # type: ignore[union-attr]
        return exp.Literal.string("/" + "/".join(escaped))
    return _call("__hati_json_pointer", path)


def rewrite(nodes: list[exp.Expr], hints: ColumnHints | None) -> None:
    """Rewrite jsonb operators and functions among `nodes` (pre-order) in place."""
    for node in reversed(nodes):  # children first
        if not attached(node):
            continue
        if isinstance(node, exp.ArrayContainsAll) and _json_pair(node.this, node.expression, hints):
            node.replace(_call("json_contains", node.this, node.expression))
        elif isinstance(node, exp.ArrayContainedBy) and _json_pair(
            node.this, node.expression, hints
        ):
            node.replace(_call("json_contains", node.expression, node.this))
        elif type(node) in _KEYS:
            node.replace(_call(_KEYS[type(node)], node.this, node.expression))
        elif isinstance(node, exp.JSONBExtract):
            node.replace(_call("json_extract", node.this, _pointer(node.expression)))
        elif isinstance(node, exp.JSONBExtractScalar):
            node.replace(_call("json_extract_string", node.this, _pointer(node.expression)))
        elif (
            type(node) in _COMPARISONS
            and not _assignment(node)
            and _json_pair(node.this, node.expression, hints)
        ):
            node.replace(
                _call(
                    "__hati_json_cmp",
                    # not copies: later passes (public -> main) still see the operands
                    exp.cast(node.this, exp.DataType.build("JSON"), copy=False),
                    exp.cast(node.expression, exp.DataType.build("JSON"), copy=False),
                    exp.Literal.string(_COMPARISONS[type(node)]),
                )
            )
        elif isinstance(node, exp.DPipe) and (
            is_json(node.this, hints) or is_json(node.expression, hints)
        ):
            node.replace(_call("__hati_jsonb_concat", node.this, node.expression))
        elif isinstance(node, exp.Sub) and is_json(node.this, hints):
            node.replace(_call("__hati_jsonb_delete", node.this, node.expression))
        elif isinstance(node, exp.Anonymous) and node.name.lower() in _ALL_FUNCTIONS:
            _function(node)
        elif isinstance(node, exp.JSONArrayAgg):
            node.replace(_call("to_json", _call("list", node.this)))
        elif isinstance(node, (exp.JSONExtract, exp.JSONExtractScalar)):
            _arrow(node)
        elif isinstance(node, exp.Lambda):
            _lambda_arrow(node)
        elif isinstance(node, exp.Cast) and _is_jsonpath(node.args.get("to")):
            node.replace(exp.cast(node.this, exp.DataType.build("VARCHAR"), copy=False))


def _is_jsonpath(to: exp.Expr | None) -> bool:
    """CAST(x AS jsonpath): DuckDB has no jsonpath type; the text is the path."""
    if not isinstance(to, exp.DataType) or to.this is not exp.DataType.Type.USERDEFINED:
        return False
    kind = to.args.get("kind")
    return kind is not None and kind.name.lower() == "jsonpath"


def _lambda_arrow(node: exp.Lambda) -> None:
    """PostgreSQL has no lambdas: `f(doc -> 'k')`, which sqlglot reads as a lambda inside
    a call's arguments, is `doc -> 'k'`."""
    params, body = node.expressions, node.this
    if len(params) != 1 or not isinstance(body, exp.Literal):
        return
    column = exp.column(params[0].name, quoted=params[0].args.get("quoted"))
    if body.is_string:
        key = body.name.replace("~", "~0").replace("/", "~1")
        path = exp.Literal.string("/" + key)
    elif body.name.isdigit():
        path = exp.Literal.string(f"$[{body.name}]")
    else:
        return
    node.replace(_call("json_extract", column, path))


def _in_call(node: exp.Expr) -> bool:
    """Whether `node` is inside a function call's arguments (in its own query)."""
    parent = node.parent
    while parent is not None and not isinstance(parent, (exp.Query, exp.Subquery)):
        if isinstance(parent, exp.Func) and not isinstance(parent, (exp.Binary, exp.Cast)):
            return True
        parent = parent.parent
    return False


def _arrow(node: exp.JSONExtract | exp.JSONExtractScalar) -> None:
    """`a -> 'k'` inside a call's arguments as json_extract(a, '$.k'): DuckDB reads
    `x -> y` there as a lambda (jsonb_typeof(doc -> 'age'))."""
    if not _in_call(node):
        return
    path = node.expression
    if not isinstance(path, exp.JSONPath):
        return
    rendered = sqlglot.parse_one(path.sql(dialect="duckdb"), read="duckdb")
    if not isinstance(rendered, exp.Literal):
        return
    name = "json_extract" if isinstance(node, exp.JSONExtract) else "json_extract_string"
    node.replace(_call(name, node.this, rendered))


def _function(node: exp.Anonymous) -> None:
    name = node.name.lower()
    args = list(node.expressions)
    if name == "jsonb_array_length":  # integer, as in PostgreSQL (DuckDB: UBIGINT)
        node.replace(exp.cast(_call("json_array_length", *args), exp.DataType.build("INT")))
    elif name == "jsonb_agg" and len(args) == 1:
        node.replace(_call("to_json", _call("list", args[0])))  # list(): ORDER BY works
    elif name in _SIMPLE_RENAMES:
        node.replace(_call(_SIMPLE_RENAMES[name], *args))
    elif name in _OBJECT_BUILDERS:
        pairs = [
            exp.cast(a, exp.DataType.build("VARCHAR"), copy=False) if i % 2 == 0 else a
            for i, a in enumerate(args)
        ]
        node.replace(_call("json_object", *pairs))
    elif len(args) == 1:
        (arg,) = args
        array = _call("__hati_json_array", arg)  # 22023 for an object or a scalar
        if name in _ELEMENTS:
            values: exp.Expr = exp.cast(array, exp.DataType.build("JSON[]"))
        elif name in _ELEMENTS_TEXT:
            values = _call("json_extract_string", array, exp.Literal.string("$[*]"))
        else:  # 22023 for an array or a scalar
            values = _call("json_keys", _call("__hati_json_object", arg, exp.Literal.string(name)))
        column = name if name in _KEYS_OF else "value"
        unnest = exp.Unnest(expressions=[values])
        parent = node.parent
        if isinstance(parent, (exp.From, exp.Join)) or (
            isinstance(parent, (exp.Table, exp.Lateral))
            and isinstance(parent.parent, (exp.From, exp.Join))
        ):
            _from_item(node, unnest, column)
        else:
            node.replace(unnest)


def _from_item(node: exp.Anonymous, unnest: exp.Unnest, column: str) -> None:
    """FROM jsonb_array_elements(j) [AS e [(value)]]: a derived table of one column."""
    holder = node.parent if isinstance(node.parent, (exp.Table, exp.Lateral)) else node
    alias = holder.args.get("alias")
    names = list(alias.columns) if isinstance(alias, exp.TableAlias) else []
    table = alias.this if isinstance(alias, exp.TableAlias) and alias.this else None
    col = names[0].name if names else column
    sub = exp.Subquery(
        this=exp.select(exp.alias_(unnest, col)),
        alias=exp.TableAlias(
            this=table or exp.to_identifier(col), columns=[exp.to_identifier(col)]
        ),
    )
    query = holder.find_ancestor(exp.Select)
    holder.replace(sub)  # (a LATERAL one too: DuckDB joins a subquery laterally by itself)
    if table is not None and not names and query is not None:
        _value_references(query, table.name, col)


def _value_references(query: exp.Select, alias: str, column: str) -> None:
    """`FROM jsonb_array_elements(j) AS e`: PostgreSQL reads a bare `e` as the element (the
    function returns one column); DuckDB as the row, a struct `{'value': ...}`, so
    `e->>'k'` was NULL. Bare references to the alias become `e.value`."""
    for ref in list(query.find_all(exp.Column)):
        if not ref.table and not ref.this.quoted and ref.name.lower() == alias.lower():
            value = exp.column(column, table=alias)
            # a select-list item keeps its name (`SELECT e` is column e, not value)
            named = ref.parent is query and ref in query.expressions
            ref.replace(exp.alias_(value, ref.name) if named else value)
