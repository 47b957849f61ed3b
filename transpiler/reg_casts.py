"""PostgreSQL's reg* types (regclass, regtype, regproc, regprocedure, regnamespace,
regrole): oids that print as names. DuckDB has no such types, so a cast becomes a call of a
catalog macro (proxy/db/catalog/45_reg.sql):

- a name (a string, a parameter, `'"' || s || '"'`) -> `__hati_regclass(x)`, the oid
  (BIGINT; an error naming the missing object);
- any other operand (an oid column) -> `__hati_regclass_name(x)`, the name (VARCHAR);
- compared with another reg* value (`p.prorettype::regtype != 'trigger'::regtype`), a
  column operand stays an oid, as both sides are in PostgreSQL;
- `x::regtype[]`: each element; `'s'::regclass` inside nextval / currval / setval: the
  name, which DuckDB's sequence functions take (and keep in a default);
- a function's name or signature as an oid (`'now'::regproc::oid`, psql's `\\sf`) ->
  `__hati_regprocedure(x)`: regproc values are names here (pg_type.typinput holds names);
- a reg* value the statement returns (`SELECT 't'::regclass`) is sent as its name, as
  PostgreSQL prints it (name_outputs).
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from transpiler import any_array
from transpiler.literals import string_value
from transpiler.regproc_columns import REGPROC_COLUMNS

SEQUENCE_FUNCTIONS = _SEQUENCE_FUNCTIONS = frozenset({"nextval", "currval", "setval"})
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)
# reg* kinds whose name form is a lookup by oid (regproc's values are names already)
_NAMED_BY_OID = frozenset({"regclass", "regtype", "regnamespace", "regrole", "regprocedure"})


def sequence_name(text: str) -> str:
    """A sequence's name as nextval / currval / setval take it, for DuckDB: PostgreSQL's
    schema `public` is DuckDB's `main` (`'public.s'`, `'"public"."s"'`); the rest as written."""
    parts = re.findall(r'"(?:[^"]|"")*"|[^."]+', text)
    if len(parts) == 2 and parts[0].strip('"').lower() == "public" and "".join(parts) != text:
        return "main." + parts[1]
    return text


def sequence_argument(node: exp.Anonymous) -> None:
    """nextval('public.s') and the like: the name given as a string, for DuckDB."""
    first = node.expressions[0] if node.expressions else None
    if isinstance(first, exp.Literal) and first.is_string:
        name = sequence_name(first.name)
        if name != first.name:
            first.replace(exp.Literal.string(name))


def _bigint() -> exp.DataType:
    return exp.DataType(this=exp.DType.BIGINT, nested=False)


def cast(node: exp.Cast, to: exp.ObjectIdentifier) -> None:
    """`x::<reg type>` or `x::oid` (children already rewritten)."""
    kind = to.name.lower()
    operand = node.this
    while isinstance(operand, exp.Paren):
        operand = operand.this
    if kind == "oid":
        if isinstance(operand, exp.Anonymous) and operand.name.lower() == "__hati_regproc":
            # 'now'::regproc::oid: the function's oid (pg_get_functiondef takes it)
            oid = _call("__hati_regprocedure", operand.expressions[0])
            node.replace(exp.cast(oid, _bigint()))  # a cast: an oid, also in the output
        else:
            node.set("to", _bigint())
        return
    # a name: a string, a parameter, or one built by || (`('"' || s || '"."' || t || '"')`)
    texty = isinstance(operand, (exp.Parameter, exp.DPipe)) or (
        isinstance(operand, exp.Literal) and operand.is_string
    )
    parent = node.parent
    if (
        kind == "regclass"
        and isinstance(operand, exp.Literal)
        and operand.is_string
        and isinstance(parent, exp.Anonymous)
        and parent.name.lower() in _SEQUENCE_FUNCTIONS
    ):
        # nextval('s'::regclass), PostgreSQL's form of a serial default (pg_dump writes
        # it): DuckDB's sequence functions take the name, and keep it in a default.
        node.replace(exp.Literal.string(sequence_name(operand.name)))
        return
    if texty and kind in ("regproc", "regprocedure") and isinstance(parent, _COMPARISONS):
        other = parent.expression if parent.this is node else parent.this
        if isinstance(other, exp.Column) and other.name.lower() in REGPROC_COLUMNS:
            # `typinput = 'array_in(cstring,oid,integer)'::regprocedure`: names here
            node.replace(_call("__hati_proc_name", operand))
            return
    if not texty and isinstance(parent, _COMPARISONS):
        other = parent.expression if parent.this is node else parent.this
        if is_oid(other):  # oid against oid, as PostgreSQL compares them
            node.replace(exp.cast(operand, _bigint()))
            return
    call = _reg_call(kind, operand, texty)
    if texty and isinstance(parent, exp.Cast) and parent.args["to"].is_type("text", "varchar"):
        # 'int4'::regtype::text is the type's name as PostgreSQL prints it ('integer')
        call = _reg_call(kind, call, False)
    node.replace(call)


def array(node: exp.Cast, to: exp.DataType) -> bool:
    """`x::regtype[]` (an array of oids or of names): each element as `x::regtype`."""
    element = to.expressions[0] if to.this is exp.DataType.Type.ARRAY and to.expressions else None
    if not isinstance(element, exp.ObjectIdentifier):
        return False
    kind = element.name.lower()
    operand = node.this
    text = string_value(operand)
    if text is not None and text.startswith("[") and text.endswith("]"):
        text = "{" + text[1:-1] + "}"  # catalog_compat R5 rewrote '{a,b}' before parsing
    items = any_array.parse_array_literal(text) if text is not None else None
    if items is not None:  # '{int4,text}'::regtype[]: the oids; their names as text
        parent = node.parent
        as_text = isinstance(parent, exp.Cast) and parent.args["to"].is_type("text[]", "varchar[]")
        values: list[exp.Expr] = []
        for item in items:
            value = exp.Null() if item is None else _reg_call(kind, exp.Literal.string(item), True)
            values.append(_reg_call(kind, value, False) if as_text and item else value)
        node.replace(exp.Array(expressions=values))
        return True
    # Element by element in a subquery: the *_name macros read pg_type in subqueries,
    # which DuckDB refuses inside a list_transform lambda.
    query = sqlglot.parse_one(_REG_ARRAY.format(fn=f"__hati_{kind}_name"), read="duckdb")
    for col in query.find_all(exp.Column):
        if col.name == "__hati_arg":
            col.replace(operand.copy())
    node.replace(query)
    return True


_REG_ARRAY = (
    "CASE WHEN __hati_arg IS NULL THEN NULL ELSE coalesce((SELECT list({fn}(__h_u.e) "
    "ORDER BY __h_u.i) FROM (SELECT unnest(__hati_arg) AS e, "
    "generate_subscripts(__hati_arg, 1) AS i) AS __h_u), CAST([] AS VARCHAR[])) END"
)


def name_outputs(root: exp.Expr) -> None:
    """The reg* values a query returns go out as names (`SELECT 't'::regclass` is `t`),
    as PostgreSQL prints them; inside the query they stay oids (joins, comparisons)."""
    if isinstance(root, exp.SetOperation):
        name_outputs(root.this)
        name_outputs(root.expression)
        return
    if not isinstance(root, exp.Select):
        return
    for item in root.expressions:
        value = item.this if isinstance(item, exp.Alias) else item
        kind = _oid_kind(value)
        if kind is None:
            continue
        named = _reg_call(kind, value.copy(), False)
        if isinstance(item, exp.Alias):
            item.set("this", named)
        else:  # PostgreSQL names a cast's column after its type
            item.replace(exp.alias_(named, kind, quoted=False))


def _oid_kind(node: exp.Expr) -> str | None:
    """The reg* kind of an oid the expression gives: `'t'::regclass`, `to_regclass('t')`."""
    if isinstance(node, exp.Anonymous):
        kind = node.name.lower().removeprefix("__hati_").removeprefix("to_")
        if node.name.lower().startswith("__hati_") and kind in _NAMED_BY_OID:
            return kind
    return None


def _call(name: str, operand: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=[operand])


def _reg_call(kind: str, operand: exp.Expr, texty: bool) -> exp.Expr:
    if kind == "oid":
        return exp.cast(operand, _bigint())
    return _call(f"__hati_{kind}" if texty else f"__hati_{kind}_name", operand)


def is_oid(node: exp.Expr) -> bool:
    """A reg* value as an oid: `'name'::regtype` (rewritten already or not)."""
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        return name.startswith("__hati_reg") and not name.endswith("_name")
    if isinstance(node, exp.Cast) and isinstance(node.args.get("to"), exp.ObjectIdentifier):
        operand = node.this
        return isinstance(operand, exp.Parameter) or (
            isinstance(operand, exp.Literal) and operand.is_string
        )
    return False
