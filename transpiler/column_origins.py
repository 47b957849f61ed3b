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
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
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


@lru_cache(maxsize=2048)
def column_origins(duckdb_sql: str) -> Origins | None:
    """The origin of each result column of a SELECT or DML ... RETURNING (DuckDB SQL);
    None when the statement has no such list (a set operation, anything else)."""
    try:
        tree = sqlglot.parse_one(duckdb_sql, read="duckdb")
    except SqlglotError:
        return None
    tree = normalize_identifiers(tree, dialect="duckdb")
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete)):
        return _returning(tree)
    if not isinstance(tree, exp.Select):
        return None
    scope = build_scope(tree)
    return None if scope is None else _select(scope)


def _relation(table: exp.Table) -> Relation:
    return Relation(table.catalog or None, table.db or None, table.name)


def _select(scope: Scope) -> Origins | None:
    select = scope.expression
    if not isinstance(select, exp.Select):
        return None  # UNION / INTERSECT / EXCEPT: PostgreSQL gives 0 for every column
    out: list[ColumnOrigin | None] = []
    for e in select.expressions:
        if isinstance(e, exp.Star):
            stars = _star(scope, None)
        elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
            stars = _star(scope, e.table)
        else:
            out.append(_projection(scope, e))
            continue
        if stars is None:
            return None  # a star whose width is unknown: no column can be placed
        out.extend(stars)
    return tuple(out)


def _star(scope: Scope, table: str | None) -> Origins | None:
    """The columns `*` (table None) or `table.*` stands for, source by source."""
    if table is None:
        sources = [src for _node, src in scope.selected_sources.values()]
    else:
        src = scope.sources.get(table)
        sources = [] if src is None else [src]
    if not sources or _joins_merge_columns(scope.expression):
        return None
    out: list[ColumnOrigin | None] = []
    for src in sources:
        if isinstance(src, exp.Table):
            if not src.name or isinstance(src.this, exp.Func):
                return None  # a table function: its width is unknown here
            out.append(ColumnOrigin((_relation(src),), None))
        elif isinstance(src, Scope):
            inner = _select(src)
            if inner is None:
                return None
            out.extend(inner)
        else:
            return None
    return tuple(out)


def _joins_merge_columns(select: exp.Expr) -> bool:
    """USING / NATURAL joins show their join columns once under a star."""
    return any(
        j.args.get("using") or j.args.get("kind") == "NATURAL"
        for j in select.args.get("joins") or ()
    )


def _projection(scope: Scope, e: exp.Expr) -> ColumnOrigin | None:
    while isinstance(e, (exp.Alias, exp.Paren)):
        e = e.this
    return _column(scope, e) if isinstance(e, exp.Column) else None


def _column(scope: Scope, col: exp.Column) -> ColumnOrigin | None:
    name = col.name
    if col.table:
        return _from_source(scope.sources.get(col.table), name)
    sources = [src for _node, src in scope.selected_sources.values()]
    if len(sources) == 1:
        return _from_source(sources[0], name)
    if sources and all(_plain_table(s) for s in sources):
        return ColumnOrigin(tuple(_relation(s) for s in sources if isinstance(s, exp.Table)), name)
    return None


def _plain_table(src: object) -> bool:
    """A table named as is: no column aliases, not a function call."""
    if not isinstance(src, exp.Table) or not src.name or isinstance(src.this, exp.Func):
        return False
    alias = src.args.get("alias")
    return not (alias is not None and alias.columns)


def _from_source(src: object, name: str) -> ColumnOrigin | None:
    if _plain_table(src):
        assert isinstance(src, exp.Table)
        return ColumnOrigin((_relation(src),), name)
    if not isinstance(src, Scope) or not isinstance(src.expression, exp.Select):
        return None
    found = [p for p in src.expression.expressions if p.alias_or_name == name]
    if len(found) != 1 or any(isinstance(p, exp.Star) for p in src.expression.expressions):
        return None
    return _projection(src, found[0])


def _returning(tree: exp.Expr) -> Origins | None:
    """DML ... RETURNING: columns of the target table (others named by FROM/USING: 0)."""
    returning = tree.args.get("returning")
    target = tree.this
    if isinstance(target, exp.Schema):
        target = target.this
    if returning is None or not isinstance(target, exp.Table) or not target.name:
        return None
    names = {target.name, target.alias_or_name}
    rel = _relation(target)
    out: list[ColumnOrigin | None] = []
    for e in returning.expressions:
        inner = e.this if isinstance(e, exp.Alias) else e
        if isinstance(inner, exp.Star):
            out.append(ColumnOrigin((rel,), None))
        elif isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star):
            if inner.table not in names:
                return None
            out.append(ColumnOrigin((rel,), None))
        elif isinstance(inner, exp.Column) and (not inner.table or inner.table in names):
            out.append(ColumnOrigin((rel,), inner.name))
        else:
            out.append(None)
    return tuple(out)
