"""Data-modifying statements in WITH (`WITH d AS (DELETE ... RETURNING *) INSERT INTO
archive SELECT * FROM d`), which DuckDB refuses: split into steps the server runs in
order (proxy/pgserver/dml_ctes.py).

Each INSERT / UPDATE / DELETE CTE becomes a step of its own, its RETURNING rows kept in
a temp table of the connection (`temp.main.__hati_cte_<n>`: temp tables are per
connection, and the name is hatiproxy's); in every later step and in the main statement
the CTE reads that table. Every DML CTE runs, referenced or not, as in PostgreSQL.

PostgreSQL runs the sub-statements on one snapshot: none sees another's changes, and the
main statement reads the tables as they were before the statement. Run one after another,
a later part would see an earlier step's changes. So a statement where that could show
is refused (0A000) rather than answered differently: a later step or the main statement
reading a table a DML CTE modifies, or two of them modifying one table (unless the
later is a plain INSERT: the rows it adds are seen by no other part). An UPDATE keeps
every row: a part that names none of the columns it sets (and no `*`) may read its table. Tables are compared
by name, without schema: a false refusal, never a wrong answer. Views and macros that
read such a table are the server's to find (proxy/pgserver/dml_ctes.py knows them).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from transpiler.colnames import figure
from transpiler.dialects import POSTGRES
from transpiler.errors import TranspileError
from transpiler.model import DmlCte, DmlCteStep

_DML = (exp.Insert, exp.Update, exp.Delete)
_DML_OR_MERGE = (*_DML, exp.Merge)
RELATION_PREFIX = "__hati_cte_"  # the temp tables: temp.main.__hati_cte_<n>


def relation(n: int) -> str:
    """The temp table of the n-th DML CTE of a statement (unquoted name)."""
    return f"{RELATION_PREFIX}{n}"


def may_apply(words: list[str]) -> bool:
    """Cheap gate on a statement's upper-cased words: WITH, and a DML word after it."""
    if "WITH" not in words:
        return False
    return any(w in _DML_WORDS for w in words[words.index("WITH") + 1 :])


_DML_WORDS = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})


def split(sql: str) -> DmlCte | None:
    """The steps of a statement whose top-level WITH holds DML; None when it holds none."""
    try:
        tree = sqlglot.parse_one(sql, read=POSTGRES)
    except ParseError:
        return None  # the normal path reports it
    with_ = tree.args.get("with_") if tree is not None else None
    _refuse_nested(tree, with_)
    if not isinstance(with_, exp.With):
        return None
    ctes: list[exp.CTE] = list(with_.expressions)
    if not any(isinstance(c.this, _DML_OR_MERGE) for c in ctes):
        return None
    for cte in ctes:
        if isinstance(cte.this, exp.Merge):
            raise TranspileError("0A000", "MERGE not supported in WITH query")
    names = {c.alias_or_name.lower() for c in ctes}
    _check_snapshot(ctes, tree, names)
    replaced: list[exp.CTE] = []  # the CTEs before the current one, as later parts see them
    described: list[exp.CTE] = []
    steps: list[DmlCteStep] = []
    silent: set[str] = set()  # DML CTEs without RETURNING: nothing to read
    for cte in ctes:
        body = cte.this
        name = cte.alias_or_name
        if not isinstance(body, _DML):
            _no_returning_read(body, silent)
            replaced.append(cte.copy())
            described.append(cte.copy())
            continue
        _no_returning_read(body, silent)
        step = body.copy()
        _name_returning(step)
        _prepend_with(step, replaced, with_.args.get("recursive"))
        returning = body.args.get("returning")
        rel = relation(len(steps)) if returning is not None else None
        numbers = _renumber(step)
        target = _target(body).name.lower()
        steps.append(DmlCteStep(name, step.sql(dialect=POSTGRES), rel, numbers, target))
        if rel is None:
            silent.add(name.lower())
            continue
        replaced.append(_as_cte(cte, _read_relation(rel)))
        described.append(_as_cte(cte, _returning_select(body)))
    main = tree.copy()
    bare = tree.copy()
    bare.set("with_", None)
    _no_returning_read(bare, silent)
    main = _with(main, replaced, with_)
    describe = _with(tree.copy(), described, with_)
    numbers, described_numbers = _renumber(main), _renumber(describe)
    rows = not isinstance(tree, _DML) or tree.args.get("returning") is not None
    return DmlCte(
        tuple(steps),
        main.sql(dialect=POSTGRES),
        describe.sql(dialect=POSTGRES),
        numbers,
        described_numbers,
        rows,
    )


def _renumber(tree: exp.Expr) -> tuple[int, ...]:
    """Number the $n `tree` uses 1, 2, ... in place; the original numbers, in order."""
    params = [p for p in tree.find_all(exp.Parameter) if p.this.is_int]
    used = sorted({int(p.this.this) for p in params})
    new = {n: i for i, n in enumerate(used, start=1)}
    for p in params:
        p.set("this", exp.Literal.number(new[int(p.this.this)]))
    return tuple(used)


def _refuse_nested(tree: exp.Expr | None, top: exp.Expr | None) -> None:
    """PostgreSQL allows DML in WITH at the top level only."""
    if tree is None:
        return
    for w in tree.find_all(exp.With):
        if w is top:
            for cte in w.expressions:
                _refuse_nested(cte.this, None)
            continue
        if any(isinstance(c.this, _DML_OR_MERGE) for c in w.expressions):
            raise TranspileError(
                "0A000",
                "WITH clause containing a data-modifying statement must be at the top level",
            )


def _name_returning(dml: exp.Expr) -> None:
    """Alias RETURNING expressions by PostgreSQL's names (`id * 2`: ?column?, `upper(v)`:
    upper): they name the temp table's columns, which later parts read."""
    returning = dml.args.get("returning")
    for e in list(returning.expressions) if returning is not None else ():
        if isinstance(e, exp.Alias) or e.is_star:
            continue
        name = figure(e)
        if name is not None:
            e.replace(exp.alias_(e.copy(), name, quoted=True))


def _prepend_with(step: exp.Expr, before: list[exp.CTE], recursive: object) -> None:
    if not before:
        return
    own = step.args.get("with_")
    ctes = [c.copy() for c in before] + (list(own.expressions) if own is not None else [])
    step.set("with_", exp.With(expressions=ctes, recursive=recursive or None))


def _with(tree: exp.Expr, ctes: list[exp.CTE], original: exp.With) -> exp.Expr:
    if ctes:
        tree.set("with_", exp.With(expressions=ctes, recursive=original.args.get("recursive")))
    else:
        tree.set("with_", None)
    return tree


def _as_cte(cte: exp.CTE, body: exp.Expr) -> exp.CTE:
    out = cte.copy()
    out.set("this", body)
    out.set("materialized", None)
    return out


def _read_relation(rel: str) -> exp.Select:
    table = exp.Table(
        this=exp.to_identifier(rel, quoted=True),
        db=exp.to_identifier("main"),
        catalog=exp.to_identifier("temp"),
    )
    return exp.select("*").from_(table)


def _returning_select(dml: exp.Expr) -> exp.Select:
    """SELECT <RETURNING list> FROM <target> [FROM / USING relations] WHERE false: the
    columns the step returns, typed, without running it."""
    returning = dml.args["returning"]
    target = _target(dml).copy()
    select = exp.select(*(e.copy() for e in returning.expressions)).from_(target)
    extra: list[exp.Expr] = []
    if isinstance(dml, exp.Update) and dml.args.get("from_") is not None:
        extra = [dml.args["from_"].this]
    if isinstance(dml, exp.Delete):
        extra = list(dml.args.get("using") or ())
    for rel in extra:
        select = select.join(rel.copy(), join_type="cross")
    return select.where(exp.false())


def _target(dml: exp.Expr) -> exp.Table:
    target = dml.this
    if isinstance(target, exp.Schema):  # INSERT INTO t (a, b)
        target = target.this
    assert isinstance(target, exp.Table)
    return target


def _no_returning_read(part: exp.Expr, silent: set[str]) -> None:
    """PostgreSQL's error for reading a DML CTE that has no RETURNING."""
    if not silent:
        return
    for table in part.find_all(exp.Table):
        if not table.db and table.name.lower() in silent:
            raise TranspileError(
                "0A000", f'WITH query "{table.name}" does not have a RETURNING clause'
            )


def _check_snapshot(ctes: list[exp.CTE], tree: exp.Expr, names: set[str]) -> None:
    """0A000 where running the parts one after another could differ from PostgreSQL's
    single snapshot (see the module docstring)."""
    modified: dict[str, str] = {}  # table -> the first CTE modifying it
    assigned: dict[str, frozenset[str] | None] = {}  # table -> the columns UPDATEs set
    selects: list[exp.Expr] = []  # SELECT CTEs: read wherever they are used (later)

    def reads(part: exp.Expr, skip: exp.Table | None) -> set[str]:
        return {
            t.name.lower()
            for t in part.find_all(exp.Table)
            if t is not skip and not (not t.db and t.name.lower() in names) and t.name
        }

    def check_reads(found: set[str], where: str, parts: list[exp.Expr]) -> None:
        for table in sorted(found):
            if table in modified and not _unaffected(assigned[table], parts):
                raise TranspileError(
                    "0A000",
                    f'table "{table}" is modified by WITH query "{modified[table]}" and read '
                    f"by {where} of the same statement: hatiproxy runs the data-modifying WITH "
                    "queries one after another, so it would see the changes PostgreSQL hides "
                    "from it (all parts of a statement see the tables as they were before "
                    "it); this is not supported. Run the data-modifying WITH query as a "
                    "statement of its own first",
                )

    def check_target(dml: exp.Expr, where: str) -> None:
        table = _target(dml).name.lower()
        plain = isinstance(dml, exp.Insert) and dml.args.get("conflict") is None
        seen = modified.get(table)
        if seen is not None and not plain:  # a plain INSERT adds rows no other part sees
            raise TranspileError(
                "0A000",
                f'table "{table}" is modified by both WITH query "{seen}" and {where}: '
                "hatiproxy runs them one after another, where PostgreSQL runs them on one "
                "snapshot; this is not supported",
            )

    for cte in ctes:
        body = cte.this
        if not isinstance(body, _DML):
            selects.append(body)
            continue
        where = f'WITH query "{cte.alias_or_name}"'
        found = reads(body, _target(body))
        for sel in selects:
            found |= reads(sel, None)
        check_reads(found, where, [body, *selects])
        check_target(body, where)
        table = _target(body).name.lower()
        modified.setdefault(table, cte.alias_or_name)
        assigned[table] = _assigned(body, assigned.get(table, frozenset()))
    main = tree.copy()
    main.set("with_", None)
    target = _target(main) if isinstance(main, _DML) else None
    found = reads(main, target)
    for sel in selects:
        found |= reads(sel, None)
    check_reads(found, "the main statement", [main, *selects])
    if isinstance(main, _DML):
        check_target(main, "the main statement")


def _assigned(dml: exp.Expr, before: frozenset[str] | None) -> frozenset[str] | None:
    """The columns an UPDATE sets, with `before`'s; None (any column, or rows added or
    removed) for every other DML."""
    if before is None or not isinstance(dml, exp.Update):
        return None
    names = set(before)
    for e in dml.expressions:
        if not (isinstance(e, exp.EQ) and isinstance(e.this, exp.Column)):
            return None
        names.add(e.this.name.lower())
    return frozenset(names)


def _unaffected(assigned: frozenset[str] | None, parts: list[exp.Expr]) -> bool:
    """Whether `parts` read the table the same before and after UPDATEs that set only
    `assigned`: an UPDATE keeps every row, so a part naming none of those columns (by
    name, whatever the table: a false refusal at worst) and no `*` or whole row reads the
    same values (LangGraph's store refreshes expires_at while it reads value)."""
    if assigned is None:
        return False
    for part in parts:
        relations = {t.alias_or_name.lower() for t in part.find_all(exp.Table)}
        relations |= {t.name.lower() for t in part.find_all(exp.Table)}
        for star in part.find_all(exp.Star):
            if not isinstance(star.parent, exp.Count):
                return False
        for col in part.find_all(exp.Column):
            name = col.name.lower()
            if name in assigned or (not col.table and name in relations):
                return False
    return True
