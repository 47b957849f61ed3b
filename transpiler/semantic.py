"""semantic_match / vector_match / semantic_rank -> DuckDB array functions + markers.

- `semantic_match(v, q [, threshold])` -> `array_cosine_similarity(v', q') >= threshold`
  (default 0.7); `vector_match` is the same function.
- `semantic_rank(v, q)` -> `array_cosine_similarity(v', q')`; in ORDER BY, `semantic_rank
  (...) DESC` (directly or through a select-list alias) becomes
  `array_cosine_distance(v', q')` ascending, the shape DuckDB's HNSW index scan uses.

Arguments (v is the stored side, q the search side):
- a string literal -> text marker `__HATI_EMBED__('...')` (role query);
- `$n` as q -> param marker `__HATI_EMBED__($n)`;
- a column -> kept as a vector if its name looks like one (contains "embed" or "vec",
  or is "emb"), otherwise a per-row column marker `__HATI_EMBED__(col)` (role
  passage): e.g. `semantic_match(content, 'billing')` or JOIN_VECTOR's text side.
  The server's `__HATI_EMBED__` must therefore be the identity on FLOAT[] / FLOAT[N]
  input, so a vector column with an unusual name still works (without HNSW);
- any other expression (array literal, cast, function call) -> used as a vector.

User-written `__HATI_EMBED__(x)` calls are accepted and classified the same way.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.dialects import HatiEmbed
from transpiler.errors import TranspileError
from transpiler.literals import string_value
from transpiler.treeutil import attached, take

DEFAULT_THRESHOLD = "0.7"
_MATCH = {"SEMANTIC_MATCH", "VECTOR_MATCH"}
_RANK = "SEMANTIC_RANK"
_EMBED = "__HATI_EMBED__"
_BARE_PARENTS = (exp.Where, exp.Having, exp.Join, exp.And, exp.Or, exp.Alias, exp.Select)


def rewrite(nodes: list[exp.Expr], dims: int) -> None:
    """Rewrite the semantic functions among `nodes` (a snapshot of the tree) in place."""
    for node in nodes:
        if isinstance(node, exp.Select):
            _rank_order_by(node)
    for node in nodes:
        if not isinstance(node, exp.Anonymous) or not attached(node):
            continue
        name = node.name.upper()
        if name in _MATCH:
            node.replace(_match(node))
        elif name == _RANK:
            node.replace(_similarity(node, "array_cosine_similarity", own=True))
        elif name == _EMBED:
            node.replace(_embed_call(node))


def is_vector_name(name: str) -> bool:
    low = name.lower()
    return "embed" in low or "vec" in low or low == "emb"


def _error(node: exp.Expr, sqlstate: str, message: str) -> TranspileError:
    start = node.meta.get("start") if node.meta else None
    return TranspileError(sqlstate, message, start + 1 if start is not None else None)


def _args(node: exp.Anonymous, low: int, high: int, usage: str) -> list[exp.Expr]:
    args = list(node.expressions)
    if not low <= len(args) <= high:
        raise _error(
            node,
            "42883",
            f"{usage}: expected {low if low == high else f'{low} or {high}'} arguments, "
            f"got {len(args)}",
        )
    return args


def _text_marker(text: str) -> HatiEmbed:
    return HatiEmbed(this=exp.Literal.string(text), kind="text")


def _stored_side(arg: exp.Expr, own: bool = False) -> exp.Expr:
    text = string_value(arg)
    if text is not None:
        return _text_marker(text)
    if isinstance(arg, exp.Column):
        if is_vector_name(arg.name):
            return take(arg, own)
        return HatiEmbed(this=take(arg, own), kind="column")
    return take(arg, own)


def _search_side(node: exp.Anonymous, arg: exp.Expr, usage: str, own: bool = False) -> exp.Expr:
    text = string_value(arg)
    if text is not None:
        return _text_marker(text)
    if isinstance(arg, exp.Parameter):
        return HatiEmbed(this=take(arg, own), kind="param")
    if isinstance(arg, exp.Column):
        if is_vector_name(arg.name):
            return take(arg, own)
        return HatiEmbed(this=take(arg, own), kind="column")
    if isinstance(arg, (exp.Literal, exp.Null, exp.Boolean)):
        raise _error(
            node,
            "42883",
            f"{usage}: the search argument must be a quoted text, a text column, a $n "
            f"parameter or a vector, not {arg.sql()}",
        )
    return take(arg, own)


def _similarity(node: exp.Anonymous, function: str, own: bool) -> exp.Expr:
    """own: `node` is being replaced, so its column / parameter arguments can move."""
    usage = "semantic_rank(column, 'search text')"
    stored, search = _args(node, 2, 2, usage)
    return exp.Anonymous(
        this=function,
        expressions=[_stored_side(stored, own), _search_side(node, search, usage, own)],
    )


def _match(node: exp.Anonymous) -> exp.Expr:
    usage = f"{node.name.lower()}(column, 'search text' [, threshold])"
    args = _args(node, 2, 3, usage)
    threshold = take(args[2], True) if len(args) == 3 else exp.Literal.number(DEFAULT_THRESHOLD)
    if string_value(threshold) is not None:
        raise _error(node, "42883", f"{usage}: threshold must be a number, not {args[2].sql()}")
    similarity = exp.Anonymous(
        this="array_cosine_similarity",
        expressions=[_stored_side(args[0], True), _search_side(node, args[1], usage, True)],
    )
    result: exp.Expr = exp.GTE(this=similarity, expression=threshold)
    if not isinstance(node.parent, _BARE_PARENTS):
        result = exp.Paren(this=result)
    return result


def _embed_call(node: exp.Anonymous) -> exp.Expr:
    usage = "__HATI_EMBED__(text)"
    (arg,) = _args(node, 1, 1, usage)
    if isinstance(arg, exp.Column):
        return HatiEmbed(this=arg, kind="column")
    embedded = _search_side(node, arg, usage, True)
    if not isinstance(embedded, HatiEmbed):
        raise _error(node, "42883", f"{usage}: argument must be a text, a column or $n")
    return embedded


def _rank_order_by(select: exp.Select) -> None:
    order = select.args.get("order")
    if not order:
        return
    aliases = {
        p.alias_or_name.lower(): p.this for p in select.expressions if isinstance(p, exp.Alias)
    }
    for ordered in order.expressions:
        target = ordered.this
        if isinstance(target, exp.Column) and not target.table:
            target = aliases.get(target.name.lower(), target)
        if not (isinstance(target, exp.Anonymous) and target.name.upper() == _RANK):
            continue
        if not ordered.args.get("desc"):
            continue
        # Through an alias the call stays in the select list: copy its arguments there.
        ordered.set("this", _similarity(target, "array_cosine_distance", target is ordered.this))
        ordered.set("desc", None)  # ascending, written without ASC
        ordered.set("nulls_first", False)
