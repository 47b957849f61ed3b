"""Where each result column of a query comes from, for RowDescription's table oid / attnum.

PostgreSQL names, for a result column that is a plain reference to a column of a table or
view (through aliases, subqueries, CTEs and joins; `a::same_type` too), that relation and
column; an expression, an aggregate, a set operation (UNION ...) or a scalar subquery gets
0. Drivers read the catalog with them (psqlODBC's nullability, pgJDBC's getTableName).

This module says which relation *as written* each column reads ("schema.t column c", or
"every column of t" for a star); the server maps that to pg_class / pg_attribute
(proxy/pgserver/column_origins.py). sqlglot's scope tools resolve aliases, derived tables
and CTEs. What cannot be pinned down without the catalog (an unqualified column over a
join) lists every candidate relation; what cannot be pinned down at all is None.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, build_scope


@dataclass(frozen=True, slots=True)
class Relation:
    """A table or view as the statement names it (lower case unless quoted)."""

    catalog: str | None
    schema: str | None
    name: str


@dataclass(frozen=True, slots=True)
class ColumnOrigin:
    """One result column from `column` of one of `candidates` (the server keeps the one
    that has it); column None: a star, every column of the (single) candidate in order."""

    candidates: tuple[Relation, ...]
    column: str | None


Origins = tuple[ColumnOrigin | None, ...]


def column_origins(tree: exp.Expr) -> Origins | None:
    """The origin of each result column of a SELECT or DML ... RETURNING, read off the
    parsed statement before any rewrite; None when it has no such list (a set operation,
    anything else). Names as PostgreSQL folds them (unquoted: lower case)."""
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete)):
        return _returning(tree)
    if not isinstance(tree, exp.Select):
        return None
    simple = _simple_sources(tree)
    if simple is not None:  # a FROM list of plain tables (the usual case): no scope walk
        return _select(simple, tree)
    try:
        scope = build_scope(tree)
        return None if scope is None else _select(_of_scope(scope), tree)
    except SqlglotError:  # what sqlglot's scopes cannot model (two unnamed table functions)
        return None


# What a SELECT reads, by folded alias, in FROM order: tables, or the scopes of derived
# tables and CTEs.
Sources = dict[str, "exp.Table | Scope"]


def _of_scope(scope: Scope) -> Sources:
    out: Sources = {}
    for alias, (_node, src) in scope.selected_sources.items():
        if isinstance(src, (exp.Table, Scope)):
            out[alias.lower()] = src
    return out


def _simple_sources(select: exp.Select) -> Sources | None:
    if select.args.get("with_") or select.args.get("with"):
        return None
    from_ = select.args.get("from_") or select.args.get("from")
    tables = [from_.this] if from_ is not None else []
    tables += [j.this for j in select.args.get("joins") or ()]
    if not tables or not all(isinstance(t, exp.Table) and _named(t) for t in tables):
        return None
    out: Sources = {}
    for t in tables:
        alias = t.args.get("alias")
        out[_fold(alias.this if alias is not None and alias.this else t.this)] = t
    return out if len(out) == len(tables) else None


def _fold(ident: object) -> str:
    """An identifier as PostgreSQL folds it: unquoted to lower case."""
    if isinstance(ident, exp.Identifier):
        return ident.this if ident.quoted else ident.this.lower()
    return str(ident).lower()


def _relation(table: exp.Table) -> Relation:
    catalog, db = table.args.get("catalog"), table.args.get("db")
    return Relation(
        _fold(catalog) if catalog else None, _fold(db) if db else None, _fold(table.this)
    )


def _named(table: exp.Table) -> bool:
    """A relation named as is (not a table function)."""
    return isinstance(table.this, exp.Identifier)


def _plain_table(src: object) -> bool:
    """A named relation without column aliases (`t x(p, q)` renames its columns)."""
    if not isinstance(src, exp.Table) or not _named(src):
        return False
    alias = src.args.get("alias")
    return not (alias is not None and alias.columns)


def _select(sources: Sources, select: exp.Expr) -> Origins | None:
    if not isinstance(select, exp.Select):
        return None  # UNION / INTERSECT / EXCEPT: PostgreSQL gives 0 for every column
    out: list[ColumnOrigin | None] = []
    for e in select.expressions:
        if isinstance(e, exp.Star):
            stars = _star(sources, select, None)
        elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
            stars = _star(sources, select, _fold(e.args["table"]) if e.args.get("table") else None)
        else:
            out.append(_projection(sources, e))
            continue
        if stars is None:
            return None  # a star whose width is unknown: no column can be placed
        out.extend(stars)
    return tuple(out)


def _star(sources: Sources, select: exp.Expr, table: str | None) -> Origins | None:
    """The columns `*` (table None) or `table.*` stands for, source by source."""
    if table is None:
        chosen = list(sources.values())
    else:
        src = sources.get(table)
        chosen = [] if src is None else [src]
    if not chosen or _joins_merge_columns(select):
        return None
    out: list[ColumnOrigin | None] = []
    for src in chosen:
        if isinstance(src, exp.Table) and _named(src):
            out.append(ColumnOrigin((_relation(src),), None))
        elif isinstance(src, Scope):
            inner = _select(_of_scope(src), src.expression)
            if inner is None:
                return None
            out.extend(inner)
        else:
            return None  # a table function, VALUES: its width is unknown here
    return tuple(out)


def _joins_merge_columns(select: exp.Expr) -> bool:
    """USING / NATURAL joins show their join columns once under a star."""
    return any(
        j.args.get("using") or j.args.get("kind") == "NATURAL" or j.args.get("method") == "NATURAL"
        for j in select.args.get("joins") or ()
    )


def _projection(sources: Sources, e: exp.Expr) -> ColumnOrigin | None:
    while isinstance(e, (exp.Alias, exp.Paren)):
        e = e.this
    if not isinstance(e, exp.Column) or not isinstance(e.this, exp.Identifier):
        return None
    name = _fold(e.this)
    if e.args.get("table"):
        return _from_source(sources.get(_fold(e.args["table"])), name)
    found = list(sources.values())
    if len(found) == 1:
        return _from_source(found[0], name)
    if found and all(_plain_table(s) for s in found):
        return ColumnOrigin(tuple(_relation(s) for s in found if isinstance(s, exp.Table)), name)
    return None


def _from_source(src: object, name: str) -> ColumnOrigin | None:
    if _plain_table(src):
        assert isinstance(src, exp.Table)
        return ColumnOrigin((_relation(src),), name)
    if not isinstance(src, Scope) or not isinstance(src.expression, exp.Select):
        return None
    projections = src.expression.expressions
    found = [p for p in projections if p.alias_or_name.lower() == name.lower()]
    if len(found) != 1 or any(isinstance(p, exp.Star) for p in projections):
        return None
    return _projection(_of_scope(src), found[0])


def _returning(tree: exp.Expr) -> Origins | None:
    """DML ... RETURNING: columns of the target table (others named by FROM/USING: 0)."""
    returning = tree.args.get("returning")
    target = tree.this
    if isinstance(target, exp.Schema):
        target = target.this
    if returning is None or not isinstance(target, exp.Table) or not _named(target):
        return None
    names = {_fold(target.this)}
    alias = target.args.get("alias")
    if alias is not None and alias.this:
        names.add(_fold(alias.this))
    rel = _relation(target)
    out: list[ColumnOrigin | None] = []
    for e in returning.expressions:
        inner = e.this if isinstance(e, exp.Alias) else e
        if not isinstance(inner, (exp.Star, exp.Column)):
            out.append(None)
            continue
        table = _fold(inner.args["table"]) if inner.args.get("table") else None
        if table is not None and table not in names:
            if isinstance(inner.this, exp.Star):
                return None  # another relation's star: its width is unknown here
            out.append(None)
        elif isinstance(inner, exp.Star) or isinstance(inner.this, exp.Star):
            out.append(ColumnOrigin((rel,), None))
        elif isinstance(inner.this, exp.Identifier):
            out.append(ColumnOrigin((rel,), _fold(inner.this)))
        else:
            out.append(None)
    return tuple(out)
