"""Catalog facts about columns, given to `transpile` by the server, and finding the table
a column reference reads.

A pure transpiler cannot see column types, so by default it tells a stored vector from
text by the column's name (semantic.py). The server knows better and passes a
`ColumnHints`: per table, each column's kind (VECTOR for FLOAT[n] / FLOAT[] arrays, TEXT,
JSON, DATE, TIMESTAMPTZ, ARRAY, OTHER), for text columns set up with `hatiproxy_embed_column` their embedding column,
and the table's columns in declared order (for INSERTs without a column list, see
insert_columns), and the sizes of FLOAT[n] columns (a distance operand bound as a parameter
takes its column's size, see pgvector.py). A hint is used only when the reference's table is known for sure (see
`table_of`); otherwise the name rule applies, exactly as without hints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

VECTOR, TEXT, JSON, DATE, OTHER = "vector", "text", "json", "date", "other"
BYTEA = "bytea"  # BLOB (bytea_input.py)
TIMESTAMPTZ = "timestamptz"  # TIMESTAMP WITH TIME ZONE (timestamp_literals.py)
ARRAY = "array"  # any other list / array column (INTEGER[], VARCHAR[], ...)
INT = "int"  # INTEGER / SMALLINT / TINYINT: their sum is bigint in PostgreSQL (int_results.py)


class ColumnHints:
    """Per table (lower-case name): {column: kind}, {text column: embedding column} and
    its column names in declared order.

    Part of transpile's cache key: hashable, compared by content, hash computed once
    (the server passes the same object until the catalog changes).
    """

    __slots__ = (
        "_columns",
        "_embedded",
        "_order",
        "_keys",
        "_sizes",
        "_identity",
        "_unique",
        "_drawn",
        "_key",
        "_hash",
    )

    def __init__(
        self,
        columns: Mapping[str, Mapping[str, str]],
        embedded: Mapping[str, Mapping[str, str]] | None = None,
        order: Mapping[str, Sequence[str]] | None = None,
        primary_keys: Mapping[str, Sequence[str]] | None = None,
        vector_sizes: Mapping[str, Mapping[str, int]] | None = None,
        identity: Mapping[str, Mapping[str, tuple[str, str]]] | None = None,
        unique: Mapping[str, Sequence[Sequence[str]]] | None = None,
        drawn: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self._columns = {
            t.lower(): {c.lower(): kind for c, kind in cols.items()} for t, cols in columns.items()
        }
        self._embedded = {
            t.lower(): {c.lower(): vec for c, vec in cols.items()}
            for t, cols in (embedded or {}).items()
        }
        self._order = {t.lower(): tuple(cols) for t, cols in (order or {}).items()}
        self._keys = {
            t.lower(): tuple(c.lower() for c in cols) for t, cols in (primary_keys or {}).items()
        }
        self._sizes = {
            t.lower(): {c.lower(): n for c, n in cols.items()}
            for t, cols in (vector_sizes or {}).items()
        }
        # identity columns: {column: (name as declared, 'a' ALWAYS | 'd' BY DEFAULT)}
        self._identity = {
            t.lower(): {c.lower(): v for c, v in cols.items()}
            for t, cols in (identity or {}).items()
        }
        # every unique key (primary key, UNIQUE constraints) of tables with no other
        # unique index: an ON CONFLICT without a target's arbiters (upsert_guard.py)
        self._unique = {
            t.lower(): tuple(
                tuple(c if c.startswith("(") else c.lower() for c in key) for key in keys
            )
            for t, keys in (unique or {}).items()
        }
        # columns whose default draws from a sequence (each row gets its own value)
        self._drawn = {
            t.lower(): frozenset(c.lower() for c in cols) for t, cols in (drawn or {}).items()
        }
        self._key = (
            tuple(sorted((t, tuple(sorted(c.items()))) for t, c in self._columns.items())),
            tuple(sorted((t, tuple(sorted(c.items()))) for t, c in self._embedded.items())),
            tuple(sorted((t, tuple(sorted(c.items()))) for t, c in self._sizes.items())),
            tuple(sorted(self._order.items())),
            tuple(sorted(self._keys.items())),
            tuple(sorted((t, tuple(sorted(c.items()))) for t, c in self._identity.items())),
            tuple(sorted(self._unique.items())),
            tuple(sorted((t, tuple(sorted(c))) for t, c in self._drawn.items())),
        )
        self._hash = hash(self._key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, ColumnHints):
            return NotImplemented
        return self._hash == other._hash and self._key == other._key

    def __repr__(self) -> str:
        return (
            f"ColumnHints({self._columns!r}, {self._embedded!r}, {self._order!r}, {self._keys!r})"
        )

    def columns(self, table: str) -> Mapping[str, str] | None:
        """{column: kind} of `table` (lower-case), None when it is not known."""
        return self._columns.get(table)

    def without_order(self) -> ColumnHints:
        """These hints without column positions and primary keys."""
        if not (self._order or self._keys or self._unique):
            return self
        # keys may have changed too
        return ColumnHints(
            self._columns, self._embedded, vector_sizes=self._sizes, identity=self._identity
        )

    def column_order(self, table: str) -> tuple[str, ...] | None:
        """The column names of `table` (lower-case) as declared, None when not known."""
        return self._order.get(table)

    def primary_key(self, table: str) -> tuple[str, ...] | None:
        """The primary key columns of `table` (lower-case), None when it has none known."""
        return self._keys.get(table)

    def unique_keys(self, table: str) -> tuple[tuple[str, ...], ...] | None:
        """Every unique key of `table` (lower-case): column names, and a unique index's
        expressions as DuckDB SQL in parentheses; None when not all are known."""
        return self._unique.get(table)

    def drawn_columns(self, table: str) -> frozenset[str]:
        """The columns of `table` (lower-case) whose default draws from a sequence."""
        return self._drawn.get(table) or frozenset()

    @property
    def has_primary_keys(self) -> bool:
        return bool(self._keys)

    def vector_size(self, table: str, column: str) -> int | None:
        """n of a FLOAT[n] column `column` of `table` (lower-case), None when not known."""
        found = self._sizes.get(table)
        return found.get(column) if found else None

    def identity(self, table: str) -> dict[str, tuple[str, str]]:
        """{column: (name, 'a' | 'd')} of `table`'s (lower-case) identity columns."""
        return self._identity.get(table) or {}

    def embedded_columns(self, table: str) -> Mapping[str, str]:
        """{text column: embedding column} registered for `table` (lower-case)."""
        return self._embedded.get(table) or {}

    def embedding_column(self, table: str, column: str) -> str | None:
        """The registered embedding column of text column `column` of `table`."""
        found = self._embedded.get(table)
        return found.get(column) if found else None


def written_values(tree: exp.Insert | exp.Update, hints: ColumnHints) -> list[tuple[str, exp.Expr]]:
    """(column kind, value) of what a write puts in known columns, where PostgreSQL types
    an untyped literal by its target column: `INSERT INTO t (a) VALUES (...)` (no column
    list: the table's declared order), `INSERT INTO t (a) SELECT <constant>` (an alias
    keeps its name: the value under it), `UPDATE t SET a = ...`, `ON CONFLICT ... DO
    UPDATE SET a = ...`."""
    out: list[tuple[str, exp.Expr]] = []
    target = tree.this
    if isinstance(tree, exp.Update):
        if isinstance(target, exp.Table):
            out += _assigned(tree.expressions, hints.columns(target.name.lower()))
        return out
    names: list[str] | None = None
    if isinstance(target, exp.Schema):
        names = [c.name.lower() for c in target.expressions]
        target = target.this
    if not isinstance(target, exp.Table):
        return out
    table = target.name.lower()
    kinds = hints.columns(table)
    if not kinds:
        return out
    if names is None:
        order = hints.column_order(table)
        names = [c.lower() for c in order] if order is not None else None
    values = tree.expression
    if names is not None and isinstance(values, exp.Values):
        for row in values.expressions:
            items = row.expressions if isinstance(row, exp.Tuple) else [row]
            out += [(kinds.get(n, OTHER), v) for n, v in zip(names, items, strict=False)]
    elif names is not None and isinstance(values, exp.Select):
        for name, item in zip(names, values.expressions, strict=False):
            value = item.this if isinstance(item, exp.Alias) else item
            out.append((kinds.get(name, OTHER), value))
    conflict = tree.args.get("conflict")
    if isinstance(conflict, exp.OnConflict):
        out += _assigned(conflict.expressions or [], kinds)
    return out


def _assigned(sets: list[exp.Expr], kinds: Mapping[str, str] | None) -> list[tuple[str, exp.Expr]]:
    if not kinds:
        return []
    return [
        (kinds.get(item.this.name.lower(), OTHER), item.expression)
        for item in sets
        if isinstance(item, exp.EQ) and isinstance(item.this, exp.Column)
    ]


_SCOPES = (exp.Select, exp.Update, exp.Delete, exp.Merge)
_ELSEWHERE = ""  # _unqualified: the column is not in this scope (an outer reference)


def table_of(column: exp.Column, hints: ColumnHints) -> str | None:
    """The table (lower-case name, known to `hints`) that `column` reads, or None when
    that cannot be told for sure: the qualifier names an alias or table of an enclosing
    FROM / JOIN / UPDATE / DELETE ... USING, or, unqualified, exactly one table of the
    innermost scope that has such a column has it. Subqueries, CTEs, table functions and
    tables the hints do not know make it None."""
    qualifier = column.table.lower()
    name = column.name.lower()
    node = column.parent
    while node is not None:
        if isinstance(node, _SCOPES):
            sources = scope_sources(node)
            if qualifier:
                for alias, table in sources:
                    if alias == qualifier:
                        return table
            else:
                found = _unqualified(sources, name, hints)
                if found != _ELSEWHERE:
                    return found
        node = node.parent
    return None


def _unqualified(
    sources: list[tuple[str, str | None]], name: str, hints: ColumnHints
) -> str | None:
    having = []
    for _, table in sources:
        cols = hints.columns(table) if table is not None else None
        if cols is None:
            return None  # a source whose columns are unknown might have it
        if name in cols:
            having.append(table)
    if not having:
        return _ELSEWHERE  # no FROM, or none of its tables has it: an outer reference
    return having[0] if len(having) == 1 else None


def scope_sources(scope: exp.Expr) -> list[tuple[str, str | None]]:
    """(alias, table name or None) for each relation the scope reads, lower-case."""
    items: list[exp.Expr | None] = []
    if isinstance(scope, exp.Select):
        from_ = scope.args.get("from_")
        if from_ is not None:
            items.append(from_.this)
    elif isinstance(scope, exp.Merge):  # MERGE INTO target USING source
        items += [scope.this, scope.args.get("using")]
    else:  # (a MERGE's WHEN ... THEN UPDATE / DELETE names no table: its MERGE's count)
        items.append(scope.this)
        extra = scope.args.get("from_") if isinstance(scope, exp.Update) else None
        if extra is not None:
            items.append(extra.this)
        items.extend(scope.args.get("using") or ())
    items.extend(join.this for join in scope.args.get("joins") or ())
    out = []
    for item in items:
        if item is None:
            continue
        alias = item.alias_or_name.lower()
        if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
            table = item.name.lower()
            out.append((alias, None if _is_cte(scope, table) else table))
        else:
            out.append((alias, None))
    return out


def _is_cte(scope: exp.Expr, name: str) -> bool:
    """Whether a WITH around (or of) `scope` defines `name` (conservatively: any CTE of
    that name counts, wherever it is visible)."""
    node: exp.Expr | None = scope
    while node is not None:
        with_ = node.args.get("with_")
        if isinstance(with_, exp.With) and any(
            cte.alias_or_name.lower() == name for cte in with_.expressions
        ):
            return True
        node = node.parent
    return False
