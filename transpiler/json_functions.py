"""PostgreSQL's JSON functions DuckDB has no counterpart for.

    jsonb_set(t, path, new [, create]) -> __hati_jsonb_set(t, path, new, create)
    jsonb_insert(t, path, new [, after]) -> __hati_jsonb_insert(t, path, new, after)
    t #- path                           -> __hati_jsonb_delete_path(t, path)
    jsonb_pretty, jsonb_strip_nulls, json_strip_nulls -> __hati_<name>
    row_to_json(r)                      -> to_json(r) (a row is a struct in DuckDB)
    jsonb_each / json_each [_text](j)   in FROM -> a derived table (key, value)
    jsonb_to_record[set](j) AS r(a int, b text) in FROM -> a derived table of those
        columns, each the member of that name cast to its type
    CAST(jsonb AS text)                 -> __hati_jsonb_text(j): jsonb's text form
    json_build_object / json_build_array / json_object_agg / json_agg -> their text
        built as PostgreSQL writes json ('{"a" : 1}', '[1, 2]', '{ "k" : 1 }'), as JSON

The __hati_ functions are Python UDFs (proxy/db/json_functions.py over
proxy/core/pg_json.py) and macros (proxy/db/catalog/56_json_functions.sql). A text[]
path is a list: a literal '{a,0}' is spelled out, anything else cast to VARCHAR[].
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.any_array import parse_array_literal
from transpiler.column_hints import ColumnHints
from transpiler.json_types import is_json as is_plain_json
from transpiler.jsonb_ops import is_json
from transpiler.literals import string_value
from transpiler.treeutil import attached

# Token texts that set the `pg` trigger (token_flags.PG_WORDS).
WORDS = frozenset(
    {
        "#-", "JSONB_SET", "JSONB_INSERT", "JSONB_PRETTY", "JSONB_STRIP_NULLS",
        "JSON_STRIP_NULLS", "ROW_TO_JSON", "JSONB_EACH", "JSON_EACH", "JSONB_EACH_TEXT",
        "JSON_EACH_TEXT", "JSONB_TO_RECORD", "JSONB_TO_RECORDSET", "JSON_TO_RECORD",
        "JSON_TO_RECORDSET", "JSON_OBJECT_AGG", "JSONB_OBJECT_AGG",
    }
)  # fmt: skip
_RENAMES = {
    "jsonb_pretty": "__hati_jsonb_pretty",
    "jsonb_strip_nulls": "__hati_jsonb_strip_nulls",
    "json_strip_nulls": "__hati_json_strip_nulls",
    "row_to_json": "to_json",
}
_EACH = frozenset({"jsonb_each", "json_each", "jsonb_each_text", "json_each_text"})
_TO_RECORD = frozenset({"jsonb_to_record", "json_to_record"})
_TO_RECORDSET = frozenset({"jsonb_to_recordset", "json_to_recordset"})
_TEXT_TYPES = (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR)
_JSON_TYPES = (exp.DataType.Type.JSON, exp.DataType.Type.JSONB)


def _call(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _path(node: exp.Expr) -> exp.Expr:
    """A text[] path as a DuckDB list of strings."""
    text = string_value(node)
    items = parse_array_literal(text) if text is not None else None
    if items is not None:
        return exp.Array(
            expressions=[exp.Null() if i is None else exp.Literal.string(i) for i in items]
        )
    return exp.cast(node, exp.DataType.build("VARCHAR[]"))


def rewrite_casts(tree: exp.Expr, hints: ColumnHints | None) -> None:
    """`j::text` of a jsonb value in jsonb's text form (a json value keeps its text)."""
    for cast in list(tree.find_all(exp.Cast)):
        to = cast.to
        if to is None or to.this not in _TEXT_TYPES or to.expressions:
            continue
        operand = cast.this
        if _jsonb(operand, hints) and not is_plain_json(operand):
            cast.replace(_call("__hati_jsonb_text", operand))


def _jsonb(node: exp.Expr, hints: ColumnHints | None) -> bool:
    """Whether `node` is JSON for sure (before jsonb_ops rewrites `||`, `-`)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.DPipe):
        return is_json(node.this, hints) or is_json(node.expression, hints)
    if isinstance(node, (exp.Sub, exp.JSONBDeleteAtPath)):
        return is_json(node.this, hints)
    return isinstance(node, exp.JSONBObjectAgg) or is_json(node, hints)


def rewrite(nodes: list[exp.Expr]) -> None:
    """Rewrite the functions above among `nodes` (pre-order) in place."""
    for node in reversed(nodes):  # children first
        if not attached(node):
            continue
        if isinstance(node, exp.JSONStripNulls) and not node.expression:
            node.replace(_call("__hati_json_strip_nulls", node.this))
        elif isinstance(node, exp.JSONBDeleteAtPath):
            node.replace(_call("__hati_jsonb_delete_path", node.this, _path(node.expression)))
        elif isinstance(node, exp.Anonymous):
            _function(node)
        elif (
            isinstance(node, exp.JSONArrayAgg)
            and not isinstance(node.parent, exp.Window)
            and not node.args.get("null_handling")
        ):
            parent = node.parent
            if isinstance(parent, exp.Filter):  # the FILTER goes to the list() inside
                parent.replace(_json_agg(node, parent.expression))
            else:
                node.replace(_json_agg(node, None))
        elif isinstance(node, exp.JSONObjectAgg) and not isinstance(
            node.parent, (exp.Filter, exp.Window)
        ):
            agg = _object_agg(node)
            if agg is not None:
                node.replace(agg)


def _value_text(v: exp.Expr) -> exp.Expr:
    """A value's json text, `null` for NULL."""
    text = exp.cast(_call("to_json", v), exp.DataType.build("VARCHAR"))
    return exp.Coalesce(this=text, expressions=[exp.Literal.string("null")])


def _key_text(k: exp.Expr) -> exp.Expr:
    return exp.cast(_call("to_json", exp.cast(k, exp.DataType.build("VARCHAR"))), "VARCHAR")


def _concat(*parts: exp.Expr) -> exp.Expr:
    out = parts[0]
    for p in parts[1:]:
        out = exp.DPipe(this=out, expression=p, safe=True)
    return out


def _as_json(text: exp.Expr) -> exp.Expr:
    return exp.cast(exp.paren(text), exp.DataType.build("JSON"))


def _json_builder(name: str, args: list[exp.Expr]) -> exp.Expr | None:
    """json_build_object(k, v, ...) as '{"k" : v, ...}', json_build_array(a, ...) as
    '[a, ...]': PostgreSQL's json text (json keeps it; DuckDB's json_object is compact)."""
    sep = exp.Literal.string(", ")
    if name == "json_build_array":
        parts = [_value_text(a) for a in args]
        open_, close = "[", "]"
    elif len(args) % 2 == 0:
        parts = [
            _concat(_key_text(k), exp.Literal.string(" : "), _value_text(v))
            for k, v in zip(args[0::2], args[1::2], strict=True)
        ]
        open_, close = "{", "}"
    else:
        return None  # PostgreSQL: an error (odd number of arguments), left to DuckDB
    body: list[exp.Expr] = [exp.Literal.string(open_)]
    for i, p in enumerate(parts):
        body += [sep.copy(), p] if i else [p]
    return _as_json(_concat(*body, exp.Literal.string(close)))


def _object_agg(node: exp.JSONObjectAgg) -> exp.Expr | None:
    """json_object_agg(k, v [ORDER BY ...]) as '{ "k" : v, ... }' (NULL over no rows)."""
    args = list(node.expressions)
    if len(args) != 2:
        return None
    key, value = args
    order = value if isinstance(value, exp.Order) else None
    if order is not None:
        value = order.this
    member: exp.Expr = _concat(_key_text(key), exp.Literal.string(" : "), _value_text(value))
    if order is not None:
        member = exp.Order(this=member, expressions=order.expressions)
    agg = exp.GroupConcat(this=member, separator=exp.Literal.string(", "))
    return _as_json(_concat(exp.Literal.string("{ "), agg, exp.Literal.string(" }")))


def _json_agg(node: exp.JSONArrayAgg, where: exp.Expr | None) -> exp.Expr:
    """json_agg(x [ORDER BY ...]) as '[x1, x2]'; rows and arrays as '[{...}, \\n {...}]',
    as PostgreSQL separates structured elements (NULL over no rows)."""
    value = node.this
    order = value if isinstance(value, exp.Order) else None
    if order is not None:
        value = order.this
    element: exp.Expr = _value_text(value.copy())
    if order is not None:
        element = exp.Order(this=element, expressions=order.expressions)
    kind = _call("typeof", _call("any_value", value.copy()))
    structured = exp.or_(
        exp.Like(this=kind, expression=exp.Literal.string("STRUCT%")),
        exp.Like(this=kind.copy(), expression=exp.Literal.string("%[]")),
    )
    sep = exp.Case(
        ifs=[exp.If(this=structured, true=exp.Literal.string(", \n "))],
        default=exp.Literal.string(", "),
    )
    values: exp.Expr = _call("list", element)
    if where is not None:
        values = exp.Filter(this=values, expression=where)
    joined = _call("array_to_string", values, sep)
    return _as_json(_concat(exp.Literal.string("["), joined, exp.Literal.string("]")))


def _function(node: exp.Anonymous) -> None:
    name = node.name.lower()
    args = list(node.expressions)
    if name in ("json_build_object", "json_build_array"):
        built = _json_builder(name, args)
        if built is not None:
            node.replace(built)
    elif name in _RENAMES:
        node.replace(_call(_RENAMES[name], *args))
    elif name in ("jsonb_set", "jsonb_insert") and len(args) in (3, 4):
        flag = args[3] if len(args) == 4 else exp.Boolean(this=name == "jsonb_set")
        node.replace(_call(f"__hati_{name}", args[0], _path(args[1]), args[2], flag))
    elif name in _EACH | _TO_RECORD | _TO_RECORDSET and len(args) == 1:
        parent = node.parent
        holder = parent if isinstance(parent, (exp.Table, exp.Lateral)) else node
        if isinstance(holder.parent, (exp.From, exp.Join)):
            _from_item(holder, name, args[0])


def _alias(holder: exp.Expr) -> tuple[str | None, list[exp.Expr]]:
    alias = holder.args.get("alias")
    if not isinstance(alias, exp.TableAlias):
        return None, []
    return (alias.name or None), list(alias.columns)


def _from_item(holder: exp.Expr, name: str, arg: exp.Expr) -> None:
    table, columns = _alias(holder)
    if name in _EACH:
        select = _each(name, arg)
        names = [c.name for c in columns[:2]] + ["key", "value"][len(columns[:2]) :]
    else:
        defs = [c for c in columns if isinstance(c, exp.ColumnDef)]
        if not defs or len(defs) != len(columns):
            return  # PostgreSQL: "a column definition list is required" (left to DuckDB)
        select = _record(name, arg, defs)
        names = [c.name for c in defs]
    sub = exp.Subquery(
        this=select,
        alias=exp.TableAlias(
            this=exp.to_identifier(table or name),
            columns=[exp.to_identifier(n) for n in names],
        ),
    )
    holder.replace(sub)


def _each(name: str, arg: exp.Expr) -> exp.Select:
    """SELECT e.key, e.value FROM (SELECT unnest(<the object's entries>) AS e)."""
    entries = _call("__hati_json_entries", arg, exp.Literal.string(name))
    # Not a copy of `arg`: the later passes (jsonb_ops: `doc -> 'k'`, read as a lambda in
    # a call's arguments) still rewrite the node they were handed.
    inner = exp.select(exp.alias_(exp.Unnest(expressions=[entries]), "__e", copy=False))
    entry = exp.column("__e")
    value: exp.Expr = _call("struct_extract", entry, exp.Literal.string("value"))
    if name.endswith("_text"):
        value = _call("__hati_json_text_value", value)
    key = _call("struct_extract", entry.copy(), exp.Literal.string("key"))
    return exp.select(exp.alias_(key, "key"), exp.alias_(value, "value")).from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("__q")))
    )


def _member(source: exp.Expr, column: exp.ColumnDef) -> exp.Expr:
    pointer = "/" + column.name.replace("~", "~0").replace("/", "~1")
    kind = column.args.get("kind")
    if isinstance(kind, exp.DataType) and kind.this in _JSON_TYPES:
        return _call("json_extract", source, exp.Literal.string(pointer))
    member = _call("json_extract", source, exp.Literal.string(pointer))
    text = _call("__hati_json_text_value", member)
    return exp.cast(text, kind) if isinstance(kind, exp.DataType) else text


def _record(name: str, arg: exp.Expr, defs: list[exp.ColumnDef]) -> exp.Select:
    # `arg` once, in a derived table of one column (not copied: see _each).
    if name in _TO_RECORD:
        record = _call("__hati_json_record", arg, exp.Literal.string(name))
        inner = exp.select(exp.alias_(record, "__r", copy=False))
    else:
        rows = _call("__hati_json_records", arg, exp.Literal.string(name))
        inner = exp.select(exp.alias_(exp.Unnest(expressions=[rows]), "__r", copy=False))
    row = exp.column("__r")
    return exp.select(*[exp.alias_(_member(row.copy(), c), c.name) for c in defs]).from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("__q")))
    )
