"""semantic_match / vector_match / semantic_rank -> DuckDB array functions + markers.

- `semantic_match(v, q [, threshold])` -> `array_cosine_similarity(v', q') >= threshold`;
  `vector_match` is the same function. The threshold is a cosine similarity: a number
  outside [-1, 1] is refused here (22023); any other expression ($n, a column) becomes
  `__HATI_THRESHOLD__(expr)`, which the server checks at run time. Without a threshold
  the comparison is with `__HATI_DEFAULT_THRESHOLD__()`: the default depends on the
  embedding model, which only the server knows (proxy/semantic/engine.py registers
  both functions), so the transpiled SQL, and the transpile cache, stay model-free.
- `semantic_rank(v, q)` -> `array_cosine_similarity(v', q')`; in ORDER BY, `semantic_rank
  (...) DESC` (directly or through a select-list alias) becomes
  `array_cosine_distance(v', q')` ascending, the shape DuckDB's HNSW index scan uses.

Arguments (v is the stored side, q the search side; see semantic_args for the kinds):
- a string literal -> text marker `__HATI_EMBED__('...')` (role query);
- `$n` as q -> param marker `__HATI_EMBED__($n)`;
- a vector column -> kept; any other column -> a per-row column marker
  `__HATI_EMBED__(col)` (role passage), e.g. `semantic_match(content, 'billing')` or
  JOIN_VECTOR's text side. The server's `__HATI_EMBED__` takes VARCHAR only: a vector
  column taken for text fails in DuckDB, and the server explains that error;
- a text column with a registered embedding column E (catalog hints): the similarity
  is `coalesce(f(E, q'), f(__HATI_EMBED__(col), q'))`, so rows the background filler
  has not embedded yet are still compared (DuckDB evaluates the second term only where
  the first is NULL); in `ORDER BY semantic_rank(col, q) DESC LIMIT k` the stored side
  is E alone, which HNSW serves (rows not embedded yet sort last);
- any other plainly-text expression -> a column marker around it; anything else
  (array literal, cast, function call) -> used as a vector.

Calls are rewritten innermost first, so a semantic call inside another's argument
(directly, in a subquery, CASE or function call) is rewritten too. User-written
`__HATI_EMBED__(x)` calls are accepted and classified the same way. The
hatidata_context table functions (context.py) are rewritten in the same pass.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler import context
from transpiler.column_hints import VECTOR, ColumnHints
from transpiler.dialects import HatiEmbed
from transpiler.errors import TranspileError
from transpiler.literals import string_value
from transpiler.semantic_args import TEXT, column_kind, is_vector_name, kind_of
from transpiler.treeutil import attached, clone

__all__ = ["CHECK_THRESHOLD", "DEFAULT_THRESHOLD", "is_vector_name", "rewrite"]

# DuckDB functions the server registers: the model's default threshold, and the range
# check of a threshold only known at run time.
DEFAULT_THRESHOLD = "__HATI_DEFAULT_THRESHOLD__"
CHECK_THRESHOLD = "__HATI_THRESHOLD__"
_MATCH = {"SEMANTIC_MATCH", "VECTOR_MATCH"}
_RANK = "SEMANTIC_RANK"
_EMBED = "__HATI_EMBED__"
_CONTEXT = {"HATIDATA_CONTEXT", "HATIDATA_RAG_CONTEXT"}
_BARE_PARENTS = (exp.Where, exp.Having, exp.Join, exp.And, exp.Or, exp.Alias, exp.Select)


class _Plan:
    """What ORDER BY wants of each semantic_rank call (found before any rewriting):
    distance: id(call) -> whether its SELECT has a LIMIT, for `ORDER BY call DESC`;
    aliased: id(call) -> (ORDER BY item, LIMIT?) for `ORDER BY alias DESC` of the call."""

    __slots__ = ("distance", "aliased")

    def __init__(self) -> None:
        self.distance: dict[int, bool] = {}
        self.aliased: dict[int, list[tuple[exp.Ordered, bool]]] = {}


def rewrite(nodes: list[exp.Expr], dims: int, hints: ColumnHints | None = None) -> None:
    """Rewrite the semantic and context calls among `nodes` (a breadth-first snapshot of
    the tree) in place. Reversed, a breadth-first list puts every node after all of its
    descendants: each call's arguments are final when the call is rewritten, so they
    can be moved, and copies of them need no further rewriting."""
    plan = _Plan()
    for node in nodes:
        if isinstance(node, exp.Select) and node.args.get("order"):
            _plan_order_by(node, plan)
    for node in reversed(nodes):
        if not isinstance(node, exp.Anonymous) or not attached(node):
            continue
        name = node.name.upper()
        if name in _MATCH:
            node.replace(_match(node, hints))
        elif name == _RANK:
            _rank(node, plan, hints)
        elif name == _EMBED:
            node.replace(_embed_call(node, hints))
        elif name in _CONTEXT:
            context.rewrite_call(node, dims)


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


def _take(node: exp.Expr, own: bool) -> exp.Expr:
    """`node` itself when the call holding it is being replaced (`own`), else a copy."""
    return node if own else clone(node)


def _text_marker(text: str) -> HatiEmbed:
    return HatiEmbed(this=exp.Literal.string(text), kind="text")


def _side(
    node: exp.Anonymous,
    arg: exp.Expr,
    usage: str,
    own: bool,
    hints: ColumnHints | None,
    search: bool,
    direct: bool = False,
) -> list[exp.Expr]:
    """The vector(s) for one argument: two, tried in turn, for a text column with an
    embedding column (just that column when `direct`), else one."""
    text = string_value(arg)
    if text is not None:
        return [_text_marker(text)]
    if search and isinstance(arg, exp.Parameter):
        return [HatiEmbed(this=_take(arg, own), kind="param")]
    if isinstance(arg, exp.Column):
        kind, vector = column_kind(arg, hints)
        if kind == VECTOR:
            return [_take(arg, own)]
        if vector is not None:
            stored = clone(arg)  # the embedding column, qualified as `arg` is
            stored.set("this", exp.to_identifier(vector))
            if direct:
                return [stored]
            return [stored, HatiEmbed(this=_take(arg, own), kind="column")]
        return [HatiEmbed(this=_take(arg, own), kind="column")]
    if search and isinstance(arg, (exp.Literal, exp.Null, exp.Boolean)):
        raise _error(
            node,
            "42883",
            f"{usage}: the search argument must be a quoted text, a text column, a $n "
            f"parameter or a vector, not {arg.sql()}",
        )
    if kind_of(arg, hints) == TEXT:
        return [HatiEmbed(this=_take(arg, own), kind="column")]
    return [_take(arg, own)]


def _compare(function: str, stored: list[exp.Expr], search: list[exp.Expr]) -> exp.Expr:
    """function(stored, search), or a COALESCE over the pairs of alternatives."""
    used: set[int] = set()

    def once(part: exp.Expr) -> exp.Expr:
        if id(part) in used:
            return clone(part)
        used.add(id(part))
        return part

    terms = [
        exp.Anonymous(this=function, expressions=[once(a), once(b)]) for a in stored for b in search
    ]
    if len(terms) == 1:
        return terms[0]
    return exp.Coalesce(this=terms[0], expressions=terms[1:])


def _similarity(
    node: exp.Anonymous,
    function: str,
    own: bool,
    hints: ColumnHints | None,
    direct: bool = False,
) -> exp.Expr:
    """own: `node` is being replaced, so its arguments can move."""
    usage = "semantic_rank(column, 'search text')"
    stored, search = _args(node, 2, 2, usage)
    return _compare(
        function,
        _side(node, stored, usage, own, hints, search=False, direct=direct),
        _side(node, search, usage, own, hints, search=True),
    )


def _rank(node: exp.Anonymous, plan: _Plan, hints: ColumnHints | None) -> None:
    # Copies for ORDER BY first: deciding a column's kind needs it still in the tree.
    for ordered, limited in plan.aliased.get(id(node), ()):
        ordered.set("this", _similarity(node, "array_cosine_distance", False, hints, limited))
    if id(node) in plan.distance:
        limited = plan.distance[id(node)]
        node.replace(_similarity(node, "array_cosine_distance", True, hints, limited))
    else:
        node.replace(_similarity(node, "array_cosine_similarity", True, hints))


def _match(node: exp.Anonymous, hints: ColumnHints | None) -> exp.Expr:
    usage = f"{node.name.lower()}(column, 'search text' [, threshold])"
    args = _args(node, 2, 3, usage)
    threshold = _threshold(node, args[2] if len(args) == 3 else None, usage)
    similarity = _compare(
        "array_cosine_similarity",
        _side(node, args[0], usage, True, hints, search=False),
        _side(node, args[1], usage, True, hints, search=True),
    )
    result: exp.Expr = exp.GTE(this=similarity, expression=threshold)
    if not isinstance(node.parent, _BARE_PARENTS):
        result = exp.Paren(this=result)
    return result


def _threshold(node: exp.Anonymous, arg: exp.Expr | None, usage: str) -> exp.Expr:
    """The threshold to compare with: a number in [-1, 1] as written, the model's default
    when there is none, else the expression wrapped in the server's run-time range check."""
    if arg is None:
        return exp.Anonymous(this=DEFAULT_THRESHOLD, expressions=[])
    if string_value(arg) is not None:
        raise _error(node, "42883", f"{usage}: threshold must be a number, not {arg.sql()}")
    if isinstance(arg, exp.Null):
        return arg
    value = _number(arg)
    if value is None:
        return exp.Anonymous(this=CHECK_THRESHOLD, expressions=[arg])
    if not -1.0 <= value <= 1.0:  # NaN too
        raise _error(
            node,
            "22023",
            f"{node.name.lower()}: threshold must be between -1 and 1 (a cosine similarity), "
            f"not {arg.sql()}",
        )
    return arg


def _number(node: exp.Expr) -> float | None:
    """The value of a numeric constant (`0.5`, `-1`, `+.3`), else None."""
    sign = 1.0
    while isinstance(node, (exp.Neg, exp.Paren)):
        if isinstance(node, exp.Neg):
            sign = -sign
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return sign * float(node.this)
        except ValueError:
            return None
    return None


def _embed_call(node: exp.Anonymous, hints: ColumnHints | None) -> exp.Expr:
    usage = "__HATI_EMBED__(text)"
    (arg,) = _args(node, 1, 1, usage)
    if isinstance(arg, exp.Column):
        return HatiEmbed(this=arg, kind="column")
    embedded = _side(node, arg, usage, True, hints, search=True)
    if not isinstance(embedded[0], HatiEmbed):
        raise _error(node, "42883", f"{usage}: argument must be a text, a column or $n")
    return embedded[0]


def _plan_order_by(select: exp.Select, plan: _Plan) -> None:
    """Mark `ORDER BY semantic_rank(...) DESC` (directly or through an alias) for the
    distance form, and make the item ascending (written without ASC)."""
    aliases = None
    limited = select.args.get("limit") is not None
    for ordered in select.args["order"].expressions:
        if not ordered.args.get("desc"):
            continue
        target = ordered.this
        if isinstance(target, exp.Column) and not target.table:
            if aliases is None:
                aliases = {
                    p.alias_or_name.lower(): p.this
                    for p in select.expressions
                    if isinstance(p, exp.Alias)
                }
            target = aliases.get(target.name.lower(), target)
        if not (isinstance(target, exp.Anonymous) and target.name.upper() == _RANK):
            continue
        if target is ordered.this:
            plan.distance[id(target)] = limited
        else:  # through an alias the call stays in the select list; ORDER BY gets a copy
            plan.aliased.setdefault(id(target), []).append((ordered, limited))
        ordered.set("desc", None)
        ordered.set("nulls_first", False)
