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
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from transpiler.dialects import POSTGRES
from transpiler.errors import TranspileError
from transpiler.plpgsql_trigger import Assign, If, Raise, Return, Step, expression, parse_body
from transpiler.trigger_ddl import DELETE, INSERT, UPDATE

_SOURCE, _NEW = "__hati_src", "__hati_new"
RAISE_MARK = "__hati_raise:"  # error('__hati_raise:SQLSTATE:message'), duckdb_errors.py


@dataclass(frozen=True, slots=True)
class Trigger:
    name: str
    tgtype: int
    columns: tuple[str, ...]  # UPDATE OF
    when: str | None
    body: str  # the function's source


@dataclass(frozen=True, slots=True)
class TableTriggers:
    """A table's enabled BEFORE ROW triggers (in name order), its columns in order and
    their defaults as PostgreSQL SQL (None: no default)."""

    schema: str  # DuckDB's (main for public)
    table: str
    columns: tuple[str, ...]
    default_texts: tuple[str | None, ...]  # by column, in order

    triggers: tuple[Trigger, ...]
    always: tuple[str, ...] = ()  # identity columns GENERATED ALWAYS (never listed)
    unqualified: bool = True  # the name alone finds this table (the search_path)

    def default(self, column: str) -> str | None:
        if column not in self.columns:
            return None
        return self.default_texts[self.columns.index(column)]


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
        found = _find(target, tables) if target is not None else None
        if found is None:
            continue
        kind = "MERGE" if isinstance(node, exp.Merge) else None
        if node is not top and kind is None:
            kind = "a data-modifying WITH"
        if kind is not None:
            _refuse(f"{kind} on a table with triggers ({found.table})")
    if top is None:
        return None
    target = _target(top)
    found = _find(target, tables) if target is not None else None
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


def _find(
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
        if not trigger.tgtype & event:
            continue
        if event == UPDATE and trigger.columns and not set_columns & set(trigger.columns):
            continue
        out.append(trigger)
    return out


class _Row:
    """NEW as expressions, the condition under which the function has returned, and the
    one under which it returned NULL (the row is skipped)."""

    def __init__(
        self, new: dict[str, exp.Expr] | None, old: dict[str, exp.Expr] | None
    ) -> None:
        self.new = new  # None in a DELETE (NEW is NULL)
        self.old = old  # None in an INSERT
        self.skip: exp.Expr = exp.false()
        self.raised: exp.Expr = exp.false()  # a RAISE ran: later triggers do not fire
        self.raises: list[tuple[exp.Expr, exp.Expr]] = []  # (condition, marked message)

    def run(self, trigger: Trigger, found: TableTriggers, op: str) -> None:
        variables = {
            "tg_op": op,
            "tg_name": trigger.name,
            "tg_when": "BEFORE",
            "tg_level": "ROW",
            "tg_table_name": found.table,
            "tg_relname": found.table,
            "tg_table_schema": "public" if found.schema == "main" else found.schema,
        }
        self.variables = variables
        # a row a trigger skipped, or one that raised, fires no later trigger
        guard: exp.Expr = _not(_or(self.skip, self.raised))
        if trigger.when is not None:
            guard = _and(guard, _truth(self.value(expression(trigger.when))))
        self.done: exp.Expr = exp.false()
        self.steps(parse_body(trigger.body), guard)

    def steps(self, steps: tuple[Step, ...], guard: exp.Expr) -> None:
        for step in steps:
            active = _and(guard, _not(self.done))
            if _is(active, False):
                return
            if isinstance(step, Assign) and self.new is None:  # DELETE: NEW is NULL
                self.fail(active, "55000", exp.Literal.string('record "new" is not assigned yet'))
            elif isinstance(step, Assign):
                if step.column not in self.new:
                    raise TranspileError("42703", f'record "new" has no field "{step.column}"')
                value = exp.paren(self.value(step.value), copy=False)
                self.new[step.column] = _case(active, value, self.new[step.column])
            elif isinstance(step, Return):
                record = None if step.null else self.old if step.old else self.new
                if record is None:  # NULL, or OLD in an INSERT, NEW in a DELETE
                    self.skip = _or(self.skip, active)
                elif step.old and self.new is not None:  # UPDATE: the old row is written
                    for c, value in record.items():
                        self.new[c] = _case(active, value.copy(), self.new[c])
                self.done = _or(self.done, active)
            elif isinstance(step, Raise):
                message: exp.Expr = exp.Literal.string(step.parts[0])
                for arg, text in zip(step.args, step.parts[1:], strict=True):
                    shown = exp.func(
                        "COALESCE",
                        exp.cast(exp.paren(self.value(arg), copy=False), "text"),
                        exp.Literal.string("NULL"),
                    )
                    message = exp.DPipe(this=message, expression=shown)
                    message = exp.DPipe(this=message, expression=exp.Literal.string(text))
                self.fail(active, step.sqlstate, message)
            elif isinstance(step, If):
                taken: exp.Expr = exp.false()
                for cond, body in step.branches:
                    truth = _truth(self.value(cond))
                    self.steps(body, _and(active, _and(_not(taken), truth)))
                    taken = _or(taken, truth)
                self.steps(step.otherwise, _and(active, _not(taken)))

    def fail(self, active: exp.Expr, sqlstate: str, message: exp.Expr) -> None:
        marked = exp.DPipe(this=exp.Literal.string(f"{RAISE_MARK}{sqlstate}:"), expression=message)
        self.raises.append((active, marked))
        self.raised = _or(self.raised, active)
        self.done = _or(self.done, active)

    def raising(self, otherwise: exp.Expr) -> exp.Expr:
        """`otherwise`, or the error of the first RAISE whose condition holds."""
        if not self.raises:
            return otherwise
        ifs = [
            exp.If(this=cond.copy(), true=exp.Anonymous(this="error", expressions=[msg]))
            for cond, msg in self.raises
        ]
        return exp.Case(ifs=ifs, default=otherwise)

    def value(self, tree: exp.Expr) -> exp.Expr:
        def swap(node: exp.Expr) -> exp.Expr:
            if not isinstance(node, exp.Column):
                return node
            record = node.table.lower()
            if isinstance(node.this, exp.Star) and record in ("new", "old"):
                values = self.new if record == "new" else self.old
                if values is None:
                    return exp.null()
                return exp.Tuple(expressions=[v.copy() for v in values.values()])
            name = node.name if node.this.quoted else node.name.lower()
            if record == "new":
                if self.new is None:
                    return exp.null()  # DELETE: NEW is NULL
                if name not in self.new:
                    raise TranspileError("42703", f'record "new" has no field "{name}"')
                return exp.paren(self.new[name].copy(), copy=False)
            if record == "old":
                if self.old is None:
                    return exp.null()  # INSERT: OLD is NULL
                if name not in self.old:
                    raise TranspileError("42703", f'record "old" has no field "{name}"')
                return self.old[name].copy()
            if not record and name.lower() in self.variables:
                return exp.Literal.string(self.variables[name.lower()])
            return node

        return tree.copy().transform(swap)


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
    items: list[exp.Expr], found: TableTriggers, qualifier: str | None
) -> tuple[list[exp.Expr], exp.Expr] | None:
    """An UPDATE's (or ON CONFLICT DO UPDATE's) SET list with the BEFORE UPDATE triggers
    applied, and the condition under which a trigger skips the row; None: none fires."""
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
    row = _Row(dict(start), old)
    for trigger in firing:
        row.run(trigger, found, "UPDATE")
    assignments: list[exp.Expr] = [
        exp.EQ(this=exp.column(c, quoted=True), expression=row.new[c])
        for c in found.columns
        if c in sets or row.new[c] is not start[c]
    ]
    # a RAISE: in the first SET value, which DuckDB computes only for the rows it updates
    first = assignments[0]
    first.set("expression", row.raising(first.expression))
    return assignments, row.skip


def _and_where(node: exp.Expr, skip: exp.Expr) -> None:
    if _is(skip, False):
        return
    keep = _not(skip)
    where = node.args.get("where")
    node.set("where", exp.Where(this=exp.and_(where.this, keep) if where else keep))


def _insert(tree: exp.Insert, found: TableTriggers) -> exp.Insert | None:
    conflict = tree.args.get("conflict")
    upsert = None
    if isinstance(conflict, exp.OnConflict) and conflict.expressions:
        # DO UPDATE runs the BEFORE UPDATE triggers on the existing row
        upsert = _updated(conflict.expressions, found, None)
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
    row = _Row(dict(start), None)
    for trigger in firing:
        row.run(trigger, found, "INSERT")
    query = exp.select(*[row.new[c] for c in columns]).from_(inner.subquery(_NEW))
    if not _is(row.skip, False) or row.raises:
        keep = row.raising(_not(row.skip))
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
    row = _Row(None, old)
    for trigger in firing:
        row.run(trigger, found, "DELETE")
    out = tree.copy()
    if not row.raises:
        _and_where(out, row.skip)
        return out
    # the error only for rows the DELETE's own WHERE takes (DuckDB may reorder an AND)
    where = out.args.get("where")
    keep = row.raising(_not(row.skip))
    if where is not None:
        keep = exp.Case(ifs=[exp.If(this=_truth(where.this), true=keep)], default=exp.false())
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


def _truth(cond: exp.Expr) -> exp.Expr:
    """IF / WHEN take NULL as false."""
    if isinstance(cond, exp.Boolean):
        return cond
    return exp.func("COALESCE", exp.paren(cond, copy=False), exp.false())


def _is(node: exp.Expr, value: bool) -> bool:
    return isinstance(node, exp.Boolean) and node.this is value


def _and(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    if _is(a, True):
        return b
    if _is(b, True):
        return a
    if _is(a, False) or _is(b, False):
        return exp.false()
    return exp.and_(a, b)


def _or(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    if _is(a, False):
        return b
    if _is(b, False):
        return a
    if _is(a, True) or _is(b, True):
        return exp.true()
    return exp.or_(a, b)


def _not(a: exp.Expr) -> exp.Expr:
    if isinstance(a, exp.Boolean):
        return exp.Boolean(this=not a.this)
    return exp.not_(exp.paren(a, copy=False))


def _case(cond: exp.Expr, then: exp.Expr, otherwise: exp.Expr) -> exp.Expr:
    if _is(cond, True):
        return then
    return exp.Case(ifs=[exp.If(this=cond.copy(), true=then)], default=otherwise)


def _refuse(what: str) -> None:
    raise TranspileError(
        "0A000",
        f"{what} is not supported: hatiproxy runs BEFORE ROW "
        "triggers on plain INSERT, UPDATE and DELETE statements",
    )
