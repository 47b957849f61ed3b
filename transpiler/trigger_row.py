"""One firing of a table's BEFORE ROW triggers on a symbolic row (trigger_rewrite.py):
NEW and OLD as SQL expressions over the statement's row, and the conditions under which
the functions skip the row or RAISE. Pure: expressions in, expressions out.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from transpiler.errors import TranspileError
from transpiler.plpgsql_trigger import (
    Assign,
    If,
    Raise,
    Return,
    Step,
    expression,
    parse_body,
    row_rewrite_refusal,
)

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


class Row:
    """NEW as expressions, the condition under which the function has returned, and the
    one under which it returned NULL (the row is skipped)."""

    def __init__(self, new: dict[str, exp.Expr] | None, old: dict[str, exp.Expr] | None) -> None:
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
        guard: exp.Expr = not_(or_(self.skip, self.raised))
        if trigger.when is not None:
            guard = and_(guard, truth(self.value(expression(trigger.when))))
        self.done: exp.Expr = exp.false()
        steps = parse_body(trigger.body)
        refused = row_rewrite_refusal(steps)
        if refused is not None:
            raise TranspileError(
                "0A000",
                f"{refused} in a BEFORE ROW trigger function is not supported: hatiproxy runs "
                "them in AFTER and statement-level triggers",
            )
        self.steps(steps, guard)

    def steps(self, steps: tuple[Step, ...], guard: exp.Expr) -> None:
        for step in steps:
            active = and_(guard, not_(self.done))
            if is_(active, False):
                return
            if isinstance(step, Assign) and self.new is None:  # DELETE: NEW is NULL
                self.fail(active, "55000", exp.Literal.string('record "new" is not assigned yet'))
            elif isinstance(step, Assign):
                if step.column not in self.new:
                    raise TranspileError("42703", f'record "new" has no field "{step.column}"')
                value = exp.paren(self.value(step.value), copy=False)
                self.new[step.column] = case(active, value, self.new[step.column])
            elif isinstance(step, Return):
                record = None if step.null else self.old if step.old else self.new
                if record is None:  # NULL, or OLD in an INSERT, NEW in a DELETE
                    self.skip = or_(self.skip, active)
                elif step.old and self.new is not None:  # UPDATE: the old row is written
                    for c, value in record.items():
                        self.new[c] = case(active, value.copy(), self.new[c])
                self.done = or_(self.done, active)
            elif isinstance(step, Raise):
                message: exp.Expr = exp.Literal.string(step.parts[0])
                for arg, text in zip(step.args, step.parts[1:], strict=True):
                    shown = raise_text(self.value(arg))
                    message = exp.DPipe(this=message, expression=shown)
                    message = exp.DPipe(this=message, expression=exp.Literal.string(text))
                self.fail(active, step.sqlstate, message)
            elif isinstance(step, If):
                taken: exp.Expr = exp.false()
                for cond, body in step.branches:
                    holds = truth(self.value(cond))
                    self.steps(body, and_(active, and_(not_(taken), holds)))
                    taken = or_(taken, holds)
                self.steps(step.otherwise, and_(active, not_(taken)))

    def fail(self, active: exp.Expr, sqlstate: str, message: exp.Expr) -> None:
        marked = exp.DPipe(this=exp.Literal.string(f"{RAISE_MARK}{sqlstate}:"), expression=message)
        self.raises.append((active, marked))
        self.raised = or_(self.raised, active)
        self.done = or_(self.done, active)

    def raising(self, otherwise: exp.Expr, only: exp.Expr | None = None) -> exp.Expr:
        """`otherwise`, or the error of the first RAISE whose condition holds (and `only`:
        a condition DuckDB checks after computing the value, ON CONFLICT's WHERE)."""
        if not self.raises:
            return otherwise
        first = [] if only is None else [exp.If(this=not_(truth(only.copy())), true=otherwise)]
        ifs = first + [
            exp.If(this=cond.copy(), true=exp.Anonymous(this="error", expressions=[msg]))
            for cond, msg in self.raises
        ]
        return exp.Case(ifs=ifs, default=otherwise.copy())

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


def truth(cond: exp.Expr) -> exp.Expr:
    """IF / WHEN take NULL as false."""
    if isinstance(cond, exp.Boolean):
        return cond
    return exp.func("COALESCE", exp.paren(cond, copy=False), exp.false())


def is_(node: exp.Expr, value: bool) -> bool:
    return isinstance(node, exp.Boolean) and node.this is value


def and_(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    if is_(a, True):
        return b
    if is_(b, True):
        return a
    if is_(a, False) or is_(b, False):
        return exp.false()
    return exp.and_(a, b)


def or_(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    if is_(a, False):
        return b
    if is_(b, False):
        return a
    if is_(a, True) or is_(b, True):
        return exp.true()
    return exp.or_(a, b)


def not_(a: exp.Expr) -> exp.Expr:
    if isinstance(a, exp.Boolean):
        return exp.Boolean(this=not a.this)
    return exp.not_(exp.paren(a, copy=False))


def case(cond: exp.Expr, then: exp.Expr, otherwise: exp.Expr) -> exp.Expr:
    if is_(cond, True):
        return then
    return exp.Case(ifs=[exp.If(this=cond.copy(), true=then)], default=otherwise)


def raise_text(value: exp.Expr) -> exp.Expr:
    """A RAISE argument as PL/pgSQL prints it: its text, a boolean `t` / `f`, NULL `<NULL>`."""
    text = exp.cast(exp.paren(value.copy(), copy=False), "text")
    kind = exp.Anonymous(this="typeof", expressions=[exp.paren(value, copy=False)])
    boolean = exp.EQ(this=kind, expression=exp.Literal.string("BOOLEAN"))
    letter = exp.Anonymous(this="left", expressions=[text.copy(), exp.Literal.number(1)])
    text = exp.Case(ifs=[exp.If(this=boolean, true=letter)], default=text)
    return exp.func("COALESCE", text, exp.Literal.string("<NULL>"))
