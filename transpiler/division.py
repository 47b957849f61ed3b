"""PostgreSQL's `/` and `%`: integer division truncates, a zero divisor is an error.

DuckDB's `/` is float division (7 / 2 = 3.5, 1 / 0 = inf) and its `%` and `//` give
NULL for a zero divisor; PostgreSQL truncates `int / int` toward zero (7 / 2 = 3,
-7 / 2 = -3) and raises 22012 "division by zero" for every type (int, numeric, float8).
So `a / b` -> `__hati_catalog.pg.__hati_div(a, b)` and `a % b` (and `mod(a, b)`) ->
`__hati_catalog.pg.__hati_mod(a, b)`, macros of the catalog layer
(proxy/db/catalog/80_hati_functions.sql):

    CASE WHEN b = 0 THEN <error unless a IS NULL> ELSE a // b END

DuckDB's `//` is integer division for two integers (of any widths, truncating) and float
division otherwise (7.5 // 2 = 3.75, an int over a numeric or float8 too). The macro
picks an overload by the operands' types: integers truncate, float8 raises 22003 on
overflow, numeric gives DECIMAL(38,16) (PostgreSQL's scale for a quotient in [1, 10000);
its scale depends on the values), INTERVAL (DuckDB has no `//` for it) divides. A NULL
dividend over a zero divisor is NULL, not an error, as PostgreSQL's strict operators.
DuckDB cannot choose between a macro's overloads for an operand it has not typed yet (an
aggregate or window function, a column in a CHECK, DEFAULT or generated column: it takes
the typed one), so such a division takes
`__hati_idiv`, `a // b` without overloads (`avg(interval_col) / 2` is then a binder
error, `avg(interval_col / 2)` or a cast works; `sum(numeric_col) / 2` is a DOUBLE).

Why the transpiler and not DuckDB's `integer_division` setting: that setting changes the
parser, so it would have to hold on every connection that parses user SQL, it keeps
NULL for a zero divisor, and it makes `interval / int` a binder error. The rewrite also
travels in a stored view's text, so a view reads the same from any connection.

A macro's parameter is substituted where it is used, so `b` is evaluated twice (the
test, then the division): free for a column, a literal or `$n`, and DuckDB computes a
repeated aggregate once. A divisor with a side effect (nextval, random, ...) or a
subquery takes `__hati_div_once` / `__hati_mod_once` instead, which bind it once
through a one-element list lambda (slower, so only for those; no INTERVAL overload).

Cost (bench/division_ab.py, 1M rows, one thread): `sum(a / b)` over int4 1.3-1.4x the
float division DuckDB ran before (~1 ms per 1M rows), int8 1.5-1.7x, numeric and float8
about the same; a CASE is cheaper than `coalesce(a // b, <zero check>)` (measured).
Divisions of aggregates (TPC-H's) run once per group: nothing to see.
"""

from __future__ import annotations

import re

from sqlglot import exp

DIV, IDIV, MOD = "__hati_div", "__hati_idiv", "__hati_mod"
_CATALOG, _SCHEMA = "__hati_catalog", "pg"  # where the catalog layer keeps them
_ONCE = "_once"
MACROS = frozenset({DIV, IDIV, MOD, DIV + _ONCE, MOD + _ONCE})
# Operands DuckDB cannot type when it picks a macro overload (it then takes the INTERVAL
# one and fails to cast, or INTEGER for a DOUBLE): these take __hati_idiv, which has none.
_UNTYPED_NODES = (exp.AggFunc, exp.Window, exp.Unnest, exp.Explode)
# A CHECK, DEFAULT or generated column: DuckDB binds these with untyped columns too.
_TABLE_DDL = (exp.ColumnConstraint, exp.Constraint)
# Functions whose value changes per call: a divisor holding one must be evaluated once.
_VOLATILE_NAMES = frozenset({"nextval", "setseed", "random", "gen_random_uuid", "uuid"})
_VOLATILE_NODES = (exp.Rand, exp.Uuid, exp.Subquery, exp.Select)


def rewrite(nodes: list[exp.Expr]) -> None:
    """Replace PostgreSQL divisions and modulos among `nodes` (a snapshot of the tree,
    treeutil.nodes) with the catalog macros. Innermost first is not needed: a rewritten
    node keeps its operand subtrees, which the snapshot still lists."""
    root = nodes[0] if nodes else None
    if isinstance(root, exp.Create) and str(root.args.get("kind") or "").upper() == "INDEX":
        # An index key may not call error() (DuckDB: "side effects"): `//` truncates as
        # PostgreSQL does; a zero divisor gives a NULL key instead of failing the build.
        for node in nodes:
            if isinstance(node, exp.Div) and node.args.get("typed"):
                node.replace(exp.IntDiv(this=node.this, expression=node.expression))
        return
    for node in nodes:
        if isinstance(node, exp.Div):
            # `typed`: sqlglot's mark for a dialect whose int / int truncates (Postgres);
            # the Snowflake reader's divisions are float divisions and stay as they are.
            if node.args.get("typed"):
                _replace(node, DIV)
        elif isinstance(node, exp.Mod):
            _replace(node, MOD)


def _replace(node: exp.Binary, macro: str) -> None:
    left, right = node.this, node.expression
    if _evaluate_once(right):
        macro += _ONCE
    elif macro == DIV and (
        left.find(*_UNTYPED_NODES)
        or right.find(*_UNTYPED_NODES)
        or isinstance(node.find_ancestor(*_TABLE_DDL, exp.Select), _TABLE_DDL)
    ):
        macro = IDIV
    call = exp.Anonymous(this=macro, expressions=[left, right])
    # Qualified: found whatever the search_path (an agent branch's query sets its own).
    node.replace(exp.Dot.build([exp.to_identifier(_CATALOG), exp.to_identifier(_SCHEMA), call]))


def _evaluate_once(divisor: exp.Expr) -> bool:
    if isinstance(divisor, (exp.Column, exp.Literal, exp.Placeholder, exp.Parameter)):
        return False
    for sub in divisor.walk():
        if isinstance(sub, _VOLATILE_NODES):
            return True
        if isinstance(sub, exp.Anonymous) and sub.name.lower() in _VOLATILE_NAMES:
            return True
    return False


# The macros as DuckDB prints them back in a stored view, default or CHECK (quotes optional).
_CALL = re.compile(
    r'"?__hati_catalog"?\s*\.\s*"?pg"?\s*\.\s*"?__hati_(i?div|mod)(?:_once)?"?\s*\(',
    re.IGNORECASE,
)


def as_postgres(sql: str) -> str:
    """DuckDB's text of a stored expression or view query with the division macros turned
    back into PostgreSQL's `(a / b)` and `(a % b)`: what pg_get_viewdef, pg_get_expr and
    pg_get_constraintdef show, so that pg_dump's output restores into PostgreSQL (and into
    hatiproxy, which rewrites it again)."""
    out: list[str] = []
    pos = 0
    while (m := _CALL.search(sql, pos)) is not None:
        args, end = _arguments(sql, m.end())
        if len(args) != 2:  # not a call this module wrote: leave it as it is
            out.append(sql[pos : m.end()])
            pos = m.end()
            continue
        op = "%" if m.group(1).lower() == "mod" else "/"
        left, right = (as_postgres(a.strip()) for a in args)
        out.append(f"{sql[pos : m.start()]}({left} {op} {right})")
        pos = end
    out.append(sql[pos:])
    return "".join(out)


def _arguments(sql: str, start: int) -> tuple[list[str], int]:
    """The top-level comma-separated arguments of the call whose '(' ends before `start`,
    and the position after its ')'; ([], start) when the parentheses do not close."""
    args: list[str] = []
    depth, begin, i = 0, start, start
    while i < len(sql):
        c = sql[i]
        if c in "'\"":  # a string or quoted identifier: its doubled quote is an escape
            close = i + 1
            while (close := sql.find(c, close)) != -1 and sql.startswith(c * 2, close):
                close += 2
            if close == -1:
                return [], start
            i = close
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                args.append(sql[begin:i])
                return args, i + 1
            depth -= 1
        elif c == "," and depth == 0:
            args.append(sql[begin:i])
            begin = i + 1
        i += 1
    return [], start
