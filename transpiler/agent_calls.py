"""Agent table functions in FROM: `SELECT * FROM search_memory('q', top_k := 5) m`.

The agent layer (memory, state, ledger, triggers, branches) runs in the server, not
in DuckDB. Each call in a FROM clause is lifted out of the tree and replaced by a
relation name `__hati_agent_<i>` (aliased as written, else as the function); the
server runs the call and registers its rows under that name before DuckDB runs the
rest of the statement, so the results compose with WHERE, JOIN, ORDER BY and the
rest of SQL. Arguments must be constants, `$n` parameters or a subquery (its rows, for
functions that take many inputs, e.g. store_memories). Parameters used only
by agent calls disappear from the SQL DuckDB sees, so the remaining ones are
renumbered; `Statement.duckdb_params` says which client parameters DuckDB gets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from transpiler.errors import TranspileError
from transpiler.treeutil import nodes as tree_nodes

# The agent function names. The transpiler is pure and must not import the server's
# registry (proxy.core.registry.REGISTRY), so the registry hands its names down here
# whenever it changes (set_agent_functions). transpile() reads the set once per call
# and makes it part of its cache key: a result computed with another set is never
# served, even if the set changes while statements are being transpiled.
_names: frozenset[str] = frozenset()


def set_agent_functions(names: Iterable[str]) -> None:
    """The names that are agent table functions from now on (lower case)."""
    global _names
    _names = frozenset(n.lower() for n in names)


def agent_functions() -> frozenset[str]:
    """The current set of agent function names."""
    return _names


# The names of the agent relations (`_hatidata_agent_memory`, ...): a connection's own
# agent rows, which the server registers for a statement that names one
# (proxy/core/relations.py). Handed down like the function names, part of the cache key.
_relations: frozenset[str] = frozenset()


def set_agent_relations(names: Iterable[str]) -> None:
    """The names that are agent relations from now on (lower case)."""
    global _relations
    _relations = frozenset(n.lower() for n in names)


def agent_relations() -> frozenset[str]:
    """The current set of agent relation names."""
    return _relations


_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})


def relations_named(tokens: Iterable[Token], names: frozenset[str]) -> tuple[str, ...]:
    """The agent relations a statement's tokens name (as names, quoted or not; never
    inside a string constant), sorted."""
    if not names:
        return ()
    found = {
        low for t in tokens if t.token_type in _NAME_TOKENS and (low := t.text.lower()) in names
    }
    return tuple(sorted(found))


RELATION_PREFIX = "__hati_agent_"


@dataclass(frozen=True, slots=True)
class Arg:
    """A constant (`value`), a client parameter (`param` = n of `$n`) or a subquery
    (`query`, its SQL text: the server runs it first and passes its rows as dicts)."""

    value: Any = None
    param: int | None = None
    query: str | None = None


@dataclass(frozen=True, slots=True)
class AgentCall:
    name: str
    args: tuple[Arg, ...]
    kwargs: tuple[tuple[str, Arg], ...]
    relation: str  # the name the server registers the rows under


def has_agent_call(words: set[str], names: frozenset[str] | None = None) -> bool:
    return not (_names if names is None else names).isdisjoint(words)


def extract(
    tree: exp.Expr, offset: int = 0, names: frozenset[str] | None = None
) -> tuple[exp.Expr, tuple[AgentCall, ...], tuple[int, ...] | None]:
    """Lift agent calls out of FROM / JOIN. Returns (tree, calls, duckdb_params).

    names: the agent function names (default: the current set). duckdb_params is None
    when the statement has no agent call, else the client parameter numbers DuckDB
    receives, in its new $1..$k order.
    """
    if names is None:
        names = _names
    calls: list[AgentCall] = []
    for table in [n for n in tree_nodes(tree) if isinstance(n, exp.Table)]:
        fn = table.this
        if not isinstance(fn, exp.Anonymous) or fn.name.lower() not in names:
            continue
        name = fn.name.lower()
        relation = f"{RELATION_PREFIX}{len(calls)}"
        args, kwargs = _arguments(name, fn.expressions, offset)
        calls.append(AgentCall(name, args, kwargs, relation))
        alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(name))
        table.replace(exp.Table(this=exp.to_identifier(relation), alias=alias))
    nodes = tree_nodes(tree)  # taken after the lifts, shared by the check and _renumber
    _check_no_scalar_use(nodes, offset, names)
    if not calls:
        return tree, (), None
    return tree, tuple(calls), _renumber(nodes)


def _check_no_scalar_use(nodes: list[exp.Expr], offset: int, names: frozenset[str]) -> None:
    """An agent function outside FROM (e.g. `SELECT store_memory('x')`) is an error."""
    for call in nodes:
        if isinstance(call, exp.Anonymous) and call.name.lower() in names:
            raise TranspileError(
                "0A000",
                f"{call.name}() is a table function: use it in FROM, e.g. "
                f"SELECT * FROM {call.name.lower()}(...)",
                offset + 1,
            )


def _arguments(
    name: str, expressions: list[exp.Expr], offset: int
) -> tuple[tuple[Arg, ...], tuple[tuple[str, Arg], ...]]:
    args: list[Arg] = []
    kwargs: list[tuple[str, Arg]] = []
    for e in expressions:
        if isinstance(e, (exp.PropertyEQ, exp.Kwarg, exp.EQ)) and isinstance(
            e.this, (exp.Identifier, exp.Var, exp.Column)
        ):
            kwargs.append((e.this.name.lower(), _constant(name, e.expression, offset)))
        else:
            if kwargs:
                raise TranspileError(
                    "42601", f"{name}(): positional argument after a named one", offset + 1
                )
            args.append(_constant(name, e, offset))
    return tuple(args), tuple(kwargs)


def _constant(name: str, e: exp.Expr, offset: int) -> Arg:
    while isinstance(e, (exp.Cast, exp.Paren)):  # '{"a":1}'::json, ($1)
        e = e.this
    if isinstance(e, exp.Subquery) and isinstance(e.this, exp.Query):
        if any(isinstance(n, exp.Parameter | exp.Placeholder) for n in tree_nodes(e)):
            raise TranspileError(
                "0A000", f"a subquery argument of {name}() cannot use $n parameters", offset + 1
            )
        return Arg(query=e.this.sql(dialect="postgres"))
    if isinstance(e, exp.Parameter | exp.Placeholder):
        n = _param_number(e)
        if n is not None:
            return Arg(param=n)
    if isinstance(e, exp.RawString):  # $$text$$ / $tag$text$tag$: a string constant
        return Arg(value=e.this)
    if isinstance(e, exp.Literal):
        if e.is_string:
            return Arg(value=e.this)
        text = e.this
        return Arg(value=float(text) if any(c in text for c in ".eE") else int(text))
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
        inner = _constant(name, e.this, offset)
        return Arg(value=-inner.value)
    if isinstance(e, exp.Boolean):
        return Arg(value=bool(e.this))
    if isinstance(e, exp.Null):
        return Arg(value=None)
    if isinstance(e, exp.Array):
        return Arg(value=[_constant(name, x, offset).value for x in e.expressions])
    raise TranspileError(
        "0A000",
        f"arguments of {name}() must be constants or $n parameters, not {e.sql()!r}",
        offset + 1,
    )


def _param_number(e: exp.Expr) -> int | None:
    inner = e.this
    if isinstance(inner, exp.Literal) and not inner.is_string and str(inner.this).isdigit():
        return int(inner.this)
    if isinstance(inner, str) and inner.isdigit():
        return int(inner)
    return None


def _renumber(all_nodes: list[exp.Expr]) -> tuple[int, ...]:
    """Renumber the $n left in the tree (its node list) to 1..k; the old numbers in their
    new order."""
    nodes = [
        (p, n)
        for p in all_nodes
        if isinstance(p, (exp.Parameter, exp.Placeholder)) and (n := _param_number(p)) is not None
    ]
    used = sorted({n for _, n in nodes})
    if used == list(range(1, len(used) + 1)):
        return tuple(used)
    new = {old: i for i, old in enumerate(used, start=1)}
    for p, n in nodes:
        p.replace(exp.Parameter(this=exp.Literal.number(new[n])))
    return tuple(used)
