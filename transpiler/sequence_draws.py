"""Which sequences a DuckDB statement may draw from, and currval() / lastval() made this
session's.

PostgreSQL's currval(s) is the value this session's last nextval(s) gave, lastval() that of
its last nextval of any sequence. DuckDB's currval is the sequence's last value whoever
drew it, and it has no lastval. The server keeps each session's values
(proxy/pgserver/sequence_values.py); these pure functions tell it where a statement draws:

- `draws(sql)`: the sequences named in nextval('...') calls, and the table an INSERT /
  UPDATE / MERGE writes (its column defaults may draw), with what the server needs to read
  an INSERT ... VALUES' drawn values from its own RETURNING rows;
- `with_returning(sql, columns)`: that INSERT with its RETURNING list extended;
- `session_values(sql, currval, lastval)`: currval('s') / lastval() replaced by constants.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

_NEXTVAL = re.compile(r"\bnextval\s*\(\s*'((?:[^']|'')+)'", re.IGNORECASE)
_WRITES = frozenset({"insert", "update", "merge"})
KINDS = frozenset({*_WRITES, "select"})  # the statements the transpiler reads (Statement.draws)


@dataclass(frozen=True, slots=True)
class Draws:
    """Where a statement may draw sequence values.

    named: sequence names (bare, lower case) of its nextval('...') calls.
    target: (schema or None, table), lower case, of the INSERT / UPDATE / MERGE; None else.
    defaults: the written rows may take column defaults (any INSERT, MERGE, an UPDATE
    that sets DEFAULT).
    values: an INSERT ... VALUES / DEFAULT VALUES without ON CONFLICT whose rows name no
    DEFAULT: the columns it gives (lower case; None: no list, the first `width` columns).
    returning: its RETURNING list, each item a column name (lower case), "*" or None
    (anything else); None: no RETURNING.
    """

    named: tuple[str, ...]
    target: tuple[str | None, str] | None
    defaults: bool
    values: tuple[str, ...] | None = None
    width: int = 0
    plain_values: bool = False
    returning: tuple[str | None, ...] | None = None
    # An INSERT (columns) <query> without ON CONFLICT: each row it writes takes the defaults
    # of the columns not listed, once.
    per_row: bool = False
    surely: bool = False  # per_row, and it surely writes (or tries) a row: VALUES
    # A SELECT without FROM whose every nextval is an output column of its own
    # (Hibernate's `select nextval('s')`): (column position, the argument as written).
    selected: tuple[tuple[int, str], ...] = ()


def sequence_name(text: str) -> str:
    """The bare name (lower case) of a sequence as nextval / currval take it:
    'name', 'schema.name', '"Quoted"'."""
    last = text.replace("''", "'").rsplit(".", 1)[-1].strip()
    if len(last) > 1 and last.startswith('"') and last.endswith('"'):
        return last[1:-1].replace('""', '"')
    return last.lower()


def draws(sql: str, tree: exp.Expr | None = None) -> Draws | None:
    """Where `sql` (DuckDB SQL) may draw sequence values; None: nowhere the server sees.
    `tree`: its DuckDB tree when there is one already (the transpiler's), else it is
    parsed when the answer needs it."""
    lowered = sql.lstrip().lower()
    named = tuple(dict.fromkeys(sequence_name(m[1]) for m in _NEXTVAL.finditer(sql)))
    first = lowered.split(None, 1)[0] if lowered else ""
    if first not in _WRITES and not (first == "select" and named):
        return Draws(named, None, False) if named else None
    if first == "update" and "default" not in lowered:
        return Draws(named, None, False) if named else None
    if tree is None:
        try:
            tree = sqlglot.parse_one(sql, read="duckdb")
        except SqlglotError:
            return Draws(named, None, False) if named else None
    if first == "select":
        return Draws(named, None, False, selected=_selected(tree))
    table = _target(tree)
    if table is None:
        # not one we can read: its nextval calls still count
        return Draws(named, None, False) if named else None
    target = ((table.db or None) and table.db.lower(), table.name.lower())
    if not isinstance(tree, exp.Insert):
        return Draws(named, target, True)
    return _insert(tree, named, target)


def _selected(tree: exp.Expr) -> tuple[tuple[int, str], ...]:
    """The output columns that are a plain nextval('s') of a FROM-less SELECT drawing
    nowhere else; () when it is not one."""
    if not isinstance(tree, exp.Select) or any(
        tree.args.get(k)
        for k in ("from", "from_", "where", "group", "having", "qualify", "with", "limit")
    ):
        return ()
    found = []
    for at, item in enumerate(tree.expressions):
        call = item.this if isinstance(item, exp.Alias) else item
        if (
            isinstance(call, exp.Anonymous)
            and call.name.lower() == "nextval"
            and len(call.expressions) == 1
            and isinstance(call.expressions[0], exp.Literal)
            and call.expressions[0].is_string
        ):
            found.append((at, call.expressions[0].this))
    calls = [n for n in tree.find_all(exp.Anonymous) if n.name.lower() == "nextval"]
    return tuple(found) if len(calls) == len(found) else ()


def _target(tree: exp.Expr | None) -> exp.Table | None:
    if isinstance(tree, exp.Insert):
        table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    elif isinstance(tree, (exp.Update, exp.Merge)):
        table = tree.this
    else:
        return None
    return table if isinstance(table, exp.Table) and table.name else None


def _insert(tree: exp.Insert, named: tuple[str, ...], target: tuple[str | None, str]) -> Draws:
    listed = (
        tuple(c.name.lower() for c in tree.this.expressions)
        if isinstance(tree.this, exp.Schema)
        else None
    )
    source = tree.expression
    conflict = bool(tree.args.get("conflict"))
    width, keyword = 0, False  # keyword: a row names DEFAULT
    rows = source.expressions if isinstance(source, exp.Values) else []
    tuples = bool(rows) and all(isinstance(r, exp.Tuple) for r in rows)
    if tuples:
        width = len(rows[0].expressions)
        keyword = any(
            isinstance(v, (exp.Var, exp.Column)) and v.name.upper() == "DEFAULT"
            for r in rows
            for v in r.expressions
        )
    if tree.args.get("default"):
        listed, plain = (), not conflict and not named
    else:
        plain = tuples and not keyword and not conflict and not named
    # ON CONFLICT: a row that conflicts drew its defaults too (they come first)
    per_row = (
        listed is not None
        and not named
        and (
            (isinstance(source, exp.Query) and not isinstance(source, exp.Values) and not conflict)
            or (tuples and not keyword and conflict)
        )
    )
    returning = None
    if (ret := tree.args.get("returning")) is not None:
        returning = tuple(_returned(e) for e in ret.expressions)
    surely = per_row and tuples  # VALUES: one row at least, each one drawing
    return Draws(named, target, True, listed, width, plain, returning, per_row, surely=surely)


def _returned(item: exp.Expr) -> str | None:
    if isinstance(item, exp.Star):
        return "*"
    if isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
        return "*"
    if isinstance(item, exp.Column):
        return item.name.lower()
    return None


def with_returning(sql: str, columns: list[str]) -> str:
    """`sql`, an INSERT ... VALUES without ON CONFLICT or RETURNING as sqlglot writes it
    (nothing after its last row), returning `columns`."""
    names = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
    return f"{sql.rstrip().rstrip(';')} RETURNING {names}"


# lastval() is __hati_lastval() in DuckDB SQL (a catalog macro DESCRIBE can type)
_READS = re.compile(r"\b(currval|lastval|__hati_lastval)\s*\(", re.IGNORECASE)


def reads_session_values(sql: str) -> bool:
    """Does `sql` call currval() or lastval()? (A cheap test before `session_values`.)"""
    return _READS.search(sql) is not None


def session_values(
    sql: str,
    currval: Callable[[str], int],
    lastval: Callable[[], int],
) -> str:
    """`sql` with each currval('name') and lastval() call replaced by the session's value
    (`currval` gets the name as written and raises when there is none). A currval of a
    computed name is left to DuckDB."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except SqlglotError:
        return sql

    def swap(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Anonymous):
            return node
        name, args = node.name.lower(), node.expressions
        if name in ("lastval", "__hati_lastval") and not args:
            return exp.cast(exp.Literal.number(lastval()), "BIGINT")
        literal = len(args) == 1 and isinstance(args[0], exp.Literal) and args[0].is_string
        if name == "currval" and literal:  # a computed name stays DuckDB's
            return exp.cast(exp.Literal.number(currval(args[0].this)), "BIGINT")
        return node

    return tree.transform(swap).sql(dialect="duckdb")
