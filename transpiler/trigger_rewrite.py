"""BEFORE ROW triggers run by rewriting the INSERT / UPDATE / DELETE that fires them.

A trigger function in hatiproxy's subset (plpgsql_trigger.py) computes the row it returns
from NEW, OLD and the TG_ variables only, so it can be run symbolically: each column of
NEW is an expression over the statement's row (an UPDATE's SET value or the old column; an
INSERT's value or the column's default), an assignment replaces that expression, an IF
makes a CASE of the branches' values, RETURN NULL a condition under which the row is
skipped, RETURN OLD the old row (skipped in an INSERT, whose OLD is NULL) and RAISE
EXCEPTION a condition under which DuckDB's error() fails the statement with a marked
message (proxy/db/duckdb_errors.py reads the SQLSTATE back), placed where DuckDB evaluates
it only for the rows the statement writes: an UPDATE's first SET value, the WHERE of an
INSERT's SELECT, a CASE over a DELETE's own WHERE. Several triggers apply in name order, each seeing the previous one's NEW, as in
PostgreSQL; a WHEN condition guards its trigger like an IF.

    UPDATE t SET a = x WHERE w          -> UPDATE t SET a = x, c = <final c> WHERE w AND NOT <skip>
    DELETE FROM t WHERE w               -> DELETE FROM t WHERE w AND NOT <skip>
    INSERT INTO t (a) VALUES (..), (..) -> INSERT INTO t (a, c) SELECT <final a>, <final c>
                                           FROM (SELECT *, <default of c> AS c FROM
                                           (VALUES ..) AS __hati_src(a)) AS __hati_new

Everything else that would fire a trigger (a data-modifying CTE, MERGE, ON CONFLICT DO
UPDATE) is refused with 0A000: a trigger never silently not run.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from transpiler.dialects import POSTGRES
from transpiler.errors import TranspileError
from transpiler.plpgsql_trigger import Assign, If, Raise, Return, Step, expression, parse_body
from transpiler.trigger_ddl import BEFORE, DELETE, INSERT, ROW, UPDATE
from transpiler.trigger_row import (
    RAISE_MARK,
    Row,
    TableTriggers,
    Trigger,
    is_,
    not_,
    truth,
)

__all__ = ["RAISE_MARK", "TableTriggers", "Trigger", "find_table", "rewrite"]

_SOURCE, _NEW = "__hati_src", "__hati_new"


def rewrite(sql: str, tables: Mapping[str, tuple[TableTriggers, ...]]) -> str | None:
    """`sql` with the triggers it fires applied; None when it fires none. `tables`: lower
    table name -> the tables of that name that have triggers."""
    return _rewrite_cached(sql, tuple(sorted(tables.items())))


@lru_cache(maxsize=512)
def _rewrite_cached(
    sql: str, frozen: tuple[tuple[str, tuple[TableTriggers, ...]], ...]
) -> str | None:
    # the same statement against the same triggers: parsed and rewritten once
    tables = dict(frozen)
    try:
        tree = sqlglot.parse_one(sql, read=POSTGRES)
    except (ParseError, TokenError):
        return None  # transpile reports the error
    top = tree if isinstance(tree, (exp.Insert, exp.Update, exp.Delete)) else None
    for node in tree.find_all(exp.Insert, exp.Update, exp.Delete, exp.Merge):
        target = _target(node)
        found = find_table(target, tables) if target is not None else None
        if found is None:
            continue
        if isinstance(node, exp.Delete) and not any(t.tgtype & DELETE for t in found.triggers):
            continue  # a DELETE fires only DELETE triggers
        kind = "MERGE" if isinstance(node, exp.Merge) else None
        if node is not top and kind is None:
            kind = "a data-modifying WITH"
        if kind is not None:
            _refuse(f"{kind} on a table with triggers ({found.table})")
    if top is None:
        return None
    target = _target(top)
    found = find_table(target, tables) if target is not None else None
    if found is None:
        return None
    if isinstance(top, exp.Update):
        done = _update(top, found)
    elif isinstance(top, exp.Delete):
        done = _delete(top, found)
    else:
        done = _insert(top, found)
    return done.sql(POSTGRES) if done is not None else None


def _target(node: exp.Expr) -> exp.Table | None:
    this = node.this
    if isinstance(this, exp.Schema):
        this = this.this
    return this if isinstance(this, exp.Table) else None


def find_table(
    table: exp.Table, tables: Mapping[str, tuple[TableTriggers, ...]]
) -> TableTriggers | None:
    candidates = tables.get(table.name.lower())
    if not candidates:
        return None
    schema = table.db.lower() if table.db else None
    if schema == "public":
        schema = "main"
    for found in candidates:
        if (found.schema == schema) if schema else found.unqualified:
            return found
    return None


def _firing(found: TableTriggers, event: int, set_columns: set[str]) -> list[Trigger]:
    out = []
    for trigger in found.triggers:
        if not trigger.tgtype & event or trigger.tgtype & (ROW | BEFORE) != ROW | BEFORE:
            continue  # (AFTER and statement-level triggers: proxy/pgserver/after_triggers.py)
        if event == UPDATE and trigger.columns and not set_columns & set(trigger.columns):
            continue
        out.append(trigger)
    return out


def _update(tree: exp.Update, found: TableTriggers) -> exp.Update | None:
    target = tree.this
    assert isinstance(target, exp.Table)
    done = _updated(tree.expressions, found, target.alias_or_name)
    if done is None:
        return None
    out = tree.copy()
    out.set("expressions", done[0])
    _and_where(out, done[1])
    return out


def _updated(
    items: list[exp.Expr],
    found: TableTriggers,
    qualifier: str | None,
    only: exp.Expr | None = None,
) -> tuple[list[exp.Expr], exp.Expr] | None:
    """An UPDATE's (or ON CONFLICT DO UPDATE's) SET list with the BEFORE UPDATE triggers
    applied, and the condition under which a trigger skips the row; None: none fires.
    `only`: DO UPDATE's WHERE (DuckDB computes SET before it; a RAISE must not)."""
    sets: dict[str, exp.Expr] = {}
    for item in items:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            _refuse("UPDATE SET (a, b) = (...) on a table with triggers")
        sets[_folded(item.this)] = item.expression
    firing = _firing(found, UPDATE, set(sets))
    if not firing:
        return None
    old = {c: exp.column(c, table=qualifier, quoted=True) for c in found.columns}
    start = {c: sets.get(c, old[c]) for c in found.columns}
    row = Row(dict(start), old)
    for trigger in firing:
        row.run(trigger, found, "UPDATE")
    assignments: list[exp.Expr] = [
        exp.EQ(this=exp.column(c, quoted=True), expression=row.new[c])
        for c in found.columns
        if c in sets or row.new[c] is not start[c]
    ]
    # a RAISE: in the first SET value, which DuckDB computes only for the rows it updates
    first = assignments[0]
    first.set("expression", row.raising(first.expression, only))
    return assignments, row.skip


def _and_where(node: exp.Expr, skip: exp.Expr) -> None:
    if is_(skip, False):
        return
    keep = not_(skip)
    where = node.args.get("where")
    node.set("where", exp.Where(this=exp.and_(where.this, keep) if where else keep))


def _insert(tree: exp.Insert, found: TableTriggers) -> exp.Insert | None:
    conflict = tree.args.get("conflict")
    upsert = None
    if isinstance(conflict, exp.OnConflict) and conflict.expressions:
        # DO UPDATE runs the BEFORE UPDATE triggers on the existing row
        where = conflict.args.get("where")
        upsert = _updated(conflict.expressions, found, None, where.this if where else None)
    firing = _firing(found, INSERT, set())
    if not firing:
        if upsert is None:
            return None
        out = tree.copy()
        _set_upsert(out, upsert)
        return out
    target = tree.this
    listed = [_folded(c) for c in target.expressions] if isinstance(target, exp.Schema) else None
    source = tree.expression
    if source is None or tree.args.get("default"):  # DEFAULT VALUES
        source, listed = None, []
    if listed is None:
        width = _width(source)
        listed = list(found.columns[:width]) if width is not None else list(found.columns)
    source = _defaults_in_values(source, listed, found)
    # what the triggers read or write besides the listed columns: its default first
    used = _used_columns(firing)
    if "*" in used:  # NEW.*: every column
        used = set(found.columns)
    if any(_skips(parse_body(t.body)) for t in firing):
        # PostgreSQL computes defaults (draws serials) before a trigger skips the row
        # (not an identity column GENERATED ALWAYS, which takes no value: drawn as usual)
        used |= {c for c in found.columns if found.default(c) and c not in found.always}
    used -= set(listed)
    unknown = used - set(found.columns)
    if unknown:
        raise TranspileError("42703", f'record "new" has no field "{sorted(unknown)[0]}"')
    extra = [c for c in found.columns if c in used]
    inner_items: list[exp.Expr] = [exp.column(c, table=_SOURCE, quoted=True) for c in listed]
    for c in extra:
        inner_items.append(exp.alias_(_default(found, c), c, quoted=True))
    if source is None:
        inner = exp.select(*inner_items) if inner_items else exp.select("1")
    else:
        derived = exp.Subquery(
            this=source.copy(),
            alias=exp.TableAlias(
                this=exp.to_identifier(_SOURCE),
                columns=[exp.to_identifier(c, quoted=True) for c in listed],
            ),
        )
        inner = exp.select(*inner_items).from_(derived)
    columns = listed + extra
    start = {c: exp.column(c, table=_NEW, quoted=True) for c in columns}
    row = Row(dict(start), None)
    for trigger in firing:
        row.run(trigger, found, "INSERT")
    query = exp.select(*[row.new[c] for c in columns]).from_(inner.subquery(_NEW))
    if not is_(row.skip, False) or row.raises:
        keep = row.raising(not_(row.skip))
        drawn = [start[c] for c in extra if found.default(c)]
        if drawn:
            # the condition reads the defaults, so DuckDB draws them for every row (as
            # PostgreSQL does, before its trigger skips one) instead of filtering first
            seen = exp.Anonymous(this="hash", expressions=[d.copy() for d in drawn])
            keep = exp.Case(ifs=[exp.If(this=seen.is_(exp.null()), true=exp.false())], default=keep)
        query = query.where(keep)
    out = tree.copy()
    table = target.this if isinstance(target, exp.Schema) else target
    out.set(
        "this",
        exp.Schema(
            this=table.copy(), expressions=[exp.to_identifier(c, quoted=True) for c in columns]
        ),
    )
    out.set("expression", query)
    out.set("default", None)
    if upsert is not None:
        _set_upsert(out, upsert)
    return out


def _delete(tree: exp.Delete, found: TableTriggers) -> exp.Delete | None:
    firing = _firing(found, DELETE, set())
    if not firing:
        return None
    target = tree.this
    assert isinstance(target, exp.Table)
    qualifier = target.alias_or_name
    old = {c: exp.column(c, table=qualifier, quoted=True) for c in found.columns}
    row = Row(None, old)
    for trigger in firing:
        row.run(trigger, found, "DELETE")
    out = tree.copy()
    if not row.raises:
        _and_where(out, row.skip)
        return out
    # the error only for rows the DELETE's own WHERE takes (DuckDB may reorder an AND)
    where = out.args.get("where")
    keep = row.raising(not_(row.skip))
    if where is not None:
        keep = exp.Case(ifs=[exp.If(this=truth(where.this), true=keep)], default=exp.false())
    out.set("where", exp.Where(this=keep))
    return out


def _set_upsert(tree: exp.Insert, upsert: tuple[list[exp.Expr], exp.Expr]) -> None:
    conflict = tree.args["conflict"]
    conflict.set("expressions", upsert[0])
    _and_where(conflict, upsert[1])


def _folded(node: exp.Expr) -> str:
    ident = node.this if isinstance(node, exp.Column) else node
    quoted = isinstance(ident, exp.Identifier) and ident.quoted
    return node.name if quoted else node.name.lower()


def _width(source: exp.Expr | None) -> int | None:
    if isinstance(source, exp.Values) and source.expressions:
        first = source.expressions[0]
        return len(first.expressions) if isinstance(first, exp.Tuple) else 1
    if isinstance(source, exp.Select) and not source.is_star:
        return len(source.expressions)
    return None


def _defaults_in_values(
    source: exp.Expr | None, listed: list[str], found: TableTriggers
) -> exp.Expr | None:
    """VALUES (DEFAULT, ...): the column's default (DEFAULT cannot move into a subquery)."""
    if not isinstance(source, exp.Values):
        return source
    source = source.copy()
    for row in source.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        for i, item in enumerate(items):
            if i < len(listed) and _is_default(item):
                item.replace(_default(found, listed[i]))
    return source


def _is_default(node: exp.Expr) -> bool:
    return (isinstance(node, (exp.Var, exp.Column)) and node.name.upper() == "DEFAULT") or (
        type(node).__name__ == "Default"
    )


def _default(found: TableTriggers, column: str) -> exp.Expr:
    text = found.default(column)
    if not text:
        return exp.null()
    return sqlglot.parse_one(text, read=POSTGRES)


def _used_columns(triggers: list[Trigger]) -> set[str]:
    used: set[str] = set()
    for trigger in triggers:
        trees: list[exp.Expr] = [expression(trigger.when)] if trigger.when else []
        pending: list[Step] = list(parse_body(trigger.body))
        while pending:
            step = pending.pop()
            if isinstance(step, Assign):
                used.add(step.column)
                trees.append(step.value)
            elif isinstance(step, Raise):
                trees += step.args
            elif isinstance(step, If):
                for cond, body in step.branches:
                    trees.append(cond)
                    pending += body
                pending += step.otherwise
        for tree in trees:
            for column in tree.find_all(exp.Column):
                if column.table.lower() == "new" and isinstance(column.this, exp.Star):
                    used.add("*")
                elif column.table.lower() == "new":
                    used.add(column.name if column.this.quoted else column.name.lower())
    return used


def _skips(steps: tuple[Step, ...]) -> bool:
    for step in steps:
        if isinstance(step, Return) and (step.null or step.old):  # OLD is NULL in an INSERT
            return True
        if isinstance(step, If) and (
            any(_skips(body) for _, body in step.branches) or _skips(step.otherwise)
        ):
            return True
    return False


def _refuse(what: str) -> None:
    raise TranspileError(
        "0A000",
        f"{what} is not supported: hatiproxy runs BEFORE ROW "
        "triggers on plain INSERT, UPDATE and DELETE statements",
    )
