"""Which statements the agent call shortcut answers (call_shortcut.py): the rule, read
from the transpiled statement's parse once per statement text and function.

Apart from call_shortcut.py because the statement's plan asks it too (how many of the
call's rows stay Python cells: statement_start.py), and call_shortcut.py reads plans.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from proxy.execution import inline_rows

if TYPE_CHECKING:
    from proxy.pgserver.results import Column
    from transpiler import Statement

# At most this many rows are answered by call_shortcut.py (a search's default 10 fit); more are encoded
# faster from DuckDB's Arrow batches (arrow_results.py).
MAX_ROWS = 16

# The declared column types whose cells call_shortcut.py converts as DuckDB would.
TYPES = frozenset(
    {"VARCHAR", "JSON", "UUID", "BIGINT", "INTEGER", "DOUBLE", "FLOAT", "BOOLEAN"}
    | {"TIMESTAMPTZ", "TIMESTAMP"}
)


@dataclass(slots=True)
class Shape:
    """How the statement's result reads the call's rows: result column i is the
    function's column picks[i]; `cols` as DuckDB described them (None: not yet seen)."""

    picks: tuple[int, ...]
    cols: tuple[Column, ...] | None = None
    off: bool = False  # DuckDB's first answer differed from ours: never shortcut
    types: tuple[str, ...] = field(default=())  # the picked columns' declared types


# (transpiled SQL, function name) -> its Shape, None when the rule does not match. The
# same text over another function (`... FROM fn(...) AS t`) has columns of its own.
_SHAPES: dict[tuple[str, str], Shape | None] = {}
_MAX_SHAPES = 4096


def shape(st: Statement, columns: tuple[tuple[str, str], ...]) -> Shape | None:
    """The Shape of a statement of one agent call (its columns `columns`), None when the
    rule does not take it."""
    call = st.agent_calls[0]
    key = (st.sql, call.name)
    try:
        return _SHAPES[key]
    except KeyError:
        pass
    picks = picked_columns(st.sql, call.relation, [name for name, _ in columns])
    found = None
    if picks is not None:
        found = Shape(picks, types=tuple(columns[i][1] for i in picks))
    if len(_SHAPES) >= _MAX_SHAPES:
        _SHAPES.clear()
    _SHAPES[key] = found
    return found


def cell_rows(st: Statement) -> int:
    """How many rows of the statement's agent call stay Python cells: up to MAX_ROWS when
    this module may answer the statement, else what inline_rows puts in the statement."""
    if (
        st.kind == "select"
        and len(st.agent_calls) == 1
        and not st.duckdb_params
        and not st.agent_relations
        and not st.bind_texts
    ):
        from proxy.core.registry import REGISTRY

        name = st.agent_calls[0].name
        if name in REGISTRY:
            fn = REGISTRY.get(name)
            if all(t in TYPES for _, t in fn.columns) and shape(st, fn.columns) is not None:
                return MAX_ROWS
    return inline_rows.MAX_ROWS


def picked_columns(sql: str, relation: str, names: list[str]) -> tuple[int, ...] | None:
    """The function columns a statement `SELECT <list> FROM <relation> [AS alias]`
    returns, in order; None when it is anything more (the rule of this module)."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, dialect="duckdb")
    except sqlglot.errors.ParseError:
        return None
    if type(tree) is not exp.Select:
        return None
    for key, value in tree.args.items():  # WHERE, LIMIT, DISTINCT, joins, WITH, ...
        if value and key not in ("expressions", "from_", "from"):
            return None
    source = tree.args.get("from_") or tree.args.get("from")
    table = source.this if isinstance(source, exp.From) else None
    if type(table) is not exp.Table or set(k for k, v in table.args.items() if v) - {
        "this",
        "alias",
    }:
        return None
    if table.name != relation:
        return None
    alias = table.args.get("alias")
    if alias is not None and (alias.args.get("columns") or set(alias.args) - {"this", "columns"}):
        return None  # fn(...) AS t(a, b) renames the columns: DuckDB's business
    qualifier = (alias.name if alias is not None else relation).lower()
    lowered = [n.lower() for n in names]
    if len(set(lowered)) != len(lowered):
        return None
    picks: list[int] = []
    for item in tree.expressions:
        target = item.this if type(item) is exp.Alias else item
        if type(item) is exp.Alias and type(target) is not exp.Column:
            return None
        if type(target) is exp.Star:
            if any(target.args.values()) or type(item) is exp.Alias:  # * EXCLUDE (...)
                return None
            picks += range(len(names))
            continue
        if type(target) is not exp.Column:
            return None
        if set(k for k, v in target.args.items() if v) - {"this", "table"}:
            return None
        if target.table and target.table.lower() != qualifier:
            return None
        if type(target.this) is exp.Star:
            if any(target.this.args.values()) or type(item) is exp.Alias:
                return None
            picks += range(len(names))
            continue
        if type(target.this) is not exp.Identifier or target.name.lower() not in lowered:
            return None
        picks.append(lowered.index(target.name.lower()))
    return tuple(picks) if picks else None
