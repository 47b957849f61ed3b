"""Which views use a table's column, read off their SQL, so that an ALTER TABLE a view
depends on is refused as PostgreSQL refuses it (DuckDB binds a view by name when it is
read: it runs the ALTER and the view breaks, or silently changes, later).

- `altered_columns`: the columns an `ALTER TABLE` drops (with or without CASCADE) or
  retypes.
- `uses_column`: whether a view's query reads a column of a table: by name, unqualified
  or qualified by the table or its alias, or through `*` / `t.*` (PostgreSQL expands a
  star when the view is made: the view depends on the columns there then).
A column of the same name in another table of an unqualified join counts too (a refusal
PostgreSQL might not make).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from transpiler.constraint_ddl import alter_tree


@dataclass(frozen=True, slots=True)
class AlteredColumns:
    schema: str | None
    table: str
    dropped: tuple[str, ...]  # DROP COLUMN without CASCADE
    retyped: tuple[str, ...]  # ALTER COLUMN ... TYPE
    cascaded: tuple[str, ...] = ()  # DROP COLUMN ... CASCADE: its views go too


def altered_columns(sql: str) -> AlteredColumns | None:
    """The columns a DuckDB `ALTER TABLE` drops or retypes; None for any other
    statement or when it does neither."""
    tree = alter_tree(sql)
    if tree is None:
        return None
    dropped, retyped, cascaded = [], [], []
    for action in tree.args.get("actions") or []:
        if isinstance(action, exp.AlterColumn) and action.args.get("dtype") is not None:
            retyped.append(action.this.name)
        elif isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "COLUMN":
            names = [c.name for c in action.args.get("tables") or []]
            (cascaded if action.args.get("cascade") else dropped).extend(names)
    if not dropped and not retyped and not cascaded:
        return None
    return AlteredColumns(
        tree.this.db or None, tree.this.name, tuple(dropped), tuple(retyped), tuple(cascaded)
    )


def uses_column(
    view_sql: str, table: str, column: str, view_columns: frozenset[str] | None = None
) -> bool:
    """Whether the view (DuckDB's `CREATE VIEW ... AS query`) reads `column` of `table`.
    `view_columns`: the view's own column names (lower case), as bound when it was made: a
    `*` covers only the columns there then (one added later is not the view's)."""
    query = _view_query(view_sql)
    if query is None:
        return False
    names = {
        (t.alias_or_name or t.name).lower()
        for t in query.find_all(exp.Table)
        if t.name.lower() == table.lower()
    }
    if not names:
        return False
    names.add(table.lower())
    for node in query.find_all(exp.Column, exp.Star):
        if isinstance(node, exp.Star):
            if isinstance(node.parent, exp.Select) and _starred(column, view_columns):
                return True  # SELECT *
            continue
        qualifier = node.table.lower()
        if isinstance(node.this, exp.Star) and qualifier in names:
            if _starred(column, view_columns):
                return True  # t.*
            continue
        if node.name.lower() == column.lower() and (not qualifier or qualifier in names):
            return True
    return False


def _view_query(view_sql: str) -> exp.Expr | None:
    """The query of DuckDB's `CREATE VIEW ... AS query` (or a bare query); None unparsable."""
    try:
        tree = sqlglot.parse_one(view_sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    query = tree.expression if isinstance(tree, exp.Create) else tree
    return query if isinstance(query, exp.Expr) else None


def _starred(column: str, view_columns: frozenset[str] | None) -> bool:
    return view_columns is None or column.lower() in view_columns


def reads_relation(view_sql: str, name: str) -> bool:
    """Whether the view's query reads the table or view `name` (by name, any schema)."""
    query = _view_query(view_sql)
    if query is None:
        return False
    return any(t.name.lower() == name.lower() for t in query.find_all(exp.Table))


def with_table_renamed(
    view_sql: str, table: str, new_table: str, schema: str = "main", new_schema: str | None = None
) -> str | None:
    """The view's `CREATE OR REPLACE VIEW` reading `new_table` where it read `table` (a
    PostgreSQL view follows its table's rename: it references it by OID); None when it
    does not read `table`. A reference qualified by another schema is another table's.
    `new_schema`: the table moved there too (SET SCHEMA): the references name it."""
    try:
        tree = sqlglot.parse_one(view_sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Create) or not isinstance(tree.expression, exp.Expr):
        return None
    tables = [
        t
        for t in tree.expression.find_all(exp.Table)
        if t.name.lower() == table.lower() and t.db.lower() in ("", schema.lower())
    ]
    if not tables:
        return None
    for node in tables:
        node.set("this", exp.to_identifier(new_table, quoted=True))
        if new_schema is not None:
            node.set("db", exp.to_identifier(new_schema, quoted=True))
    for column in tree.expression.find_all(exp.Column):  # t.a: the qualifier follows too
        if column.table.lower() == table.lower():
            column.set("table", exp.to_identifier(new_table, quoted=True))
    tree.set("replace", True)
    return tree.sql(dialect="duckdb")


def with_column_renamed(
    view_sql: str, table: str, column: str, new_column: str, view_columns: list[str] | None = None
) -> str | None:
    """The view's `CREATE OR REPLACE VIEW` reading `new_column` of `table` where it read
    `column`, its own column keeping its name (`SELECT b AS a`, as PostgreSQL shows a
    view after RENAME COLUMN); None when it does not read the column by name.
    `view_columns`: the view's own columns in order; a `SELECT * FROM table` is written
    out as them (PostgreSQL expanded the `*` when the view was made)."""
    tree = _starred_out(view_sql, table, column, view_columns or [])
    if tree is None:
        if not uses_column(view_sql, table, column, frozenset()):
            return None
        tree = sqlglot.parse_one(view_sql, read="duckdb")
    if not isinstance(tree, exp.Create) or not isinstance(tree.expression, exp.Expr):
        return None
    names = {
        (t.alias_or_name or t.name).lower()
        for t in tree.expression.find_all(exp.Table)
        if t.name.lower() == table.lower()
    } | {table.lower()}
    for select in tree.expression.find_all(exp.Select):
        select.set(
            "expressions",
            [
                exp.alias_(e, e.name, quoted=True)
                if isinstance(e, exp.Column) and e.name.lower() == column.lower()
                else e
                for e in select.expressions
            ],
        )
    for node in list(tree.expression.find_all(exp.Column)):
        if node.name.lower() == column.lower() and (not node.table or node.table.lower() in names):
            node.set("this", exp.to_identifier(new_column, quoted=True))
    tree.set("replace", True)
    return tree.sql(dialect="duckdb")


def _starred_out(view_sql: str, table: str, column: str, columns: list[str]) -> exp.Expr | None:
    """The view's tree with its `SELECT * FROM table` written out as `columns` when the
    star covers `column`; None otherwise."""
    if column.lower() not in (c.lower() for c in columns):
        return None
    try:
        tree = sqlglot.parse_one(view_sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    query = tree.expression if isinstance(tree, exp.Create) else None
    if not isinstance(query, exp.Select) or [type(e) for e in query.expressions] != [exp.Star]:
        return None
    source = query.args.get("from_") or query.args.get("from")
    if query.args.get("joins") or source is None or not isinstance(source.this, exp.Table):
        return None
    if source.this.name.lower() != table.lower():
        return None
    query.set("expressions", [exp.column(c, quoted=True) for c in columns])
    return tree
