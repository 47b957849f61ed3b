"""`ALTER VIEW [IF EXISTS] v RENAME [COLUMN] a TO b` (PostgreSQL 13+; DuckDB 1.5 has no
such statement) and `ALTER VIEW v RENAME TO w`, also written `ALTER TABLE` as PostgreSQL
allows for a view: read off the statement's tokens for the server
(proxy/pgserver/view_rename.py), which rewrites the view and the views over it. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from transpiler.constraint_tokens import alter_head, folded_name, is_name


@dataclass(frozen=True, slots=True)
class ViewRename:
    name: str
    schema: str | None  # as written; None: found on the search path
    column: str | None  # RENAME COLUMN: the column, else None (the view's RENAME TO)
    new_name: str
    if_exists: bool
    as_table: bool  # written ALTER TABLE (a table of that name is not ours)


def parse(sql: str) -> ViewRename | None:
    """The request of an `ALTER VIEW | TABLE ... RENAME ...`; None for any other statement."""
    if "RENAME" not in sql.upper():
        return None
    head = alter_head(sql)
    if head is None or head.kind not in ("VIEW", "TABLE"):
        return None
    tokens, words, i = head.tokens, head.words, head.end
    if words[i : i + 1] != ["RENAME"]:
        return None
    column = None
    if words[i + 1 : i + 2] == ["COLUMN"]:
        i += 1
    if words[i + 1 : i + 2] != ["TO"]:
        if i + 1 >= len(tokens) or not is_name(tokens[i + 1]) or words[i + 1] == "CONSTRAINT":
            return None
        column, i = folded_name(tokens[i + 1]), i + 1
    if words[i + 1 : i + 2] != ["TO"] or i + 3 != len(tokens) or not is_name(tokens[i + 2]):
        return None
    new_name = folded_name(tokens[i + 2])
    return ViewRename(
        head.name, head.schema, column, new_name, head.if_exists, head.kind == "TABLE"
    )


def with_columns(
    view_sql: str, old: list[str], columns: list[str], database: str, schema: str
) -> str | None:
    """DuckDB's `CREATE VIEW v [(...)] AS query` as `CREATE OR REPLACE VIEW
    database.schema.v AS query` whose columns, named `old`, are named `columns`
    (PostgreSQL's RENAME COLUMN of a view renames only them); None when the text is not
    of that form. A `SELECT * FROM one_relation` is written out as `old`."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(view_sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Create) or not isinstance(tree.expression, exp.Expr):
        return None
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not isinstance(target, exp.Table):
        return None
    target.set("catalog", exp.to_identifier(database, quoted=True))
    target.set("db", exp.to_identifier(schema, quoted=True))
    query = tree.expression
    source = query.args.get("from_") if isinstance(query, exp.Select) else None
    if (
        isinstance(query, exp.Select)
        and [type(e) for e in query.expressions] == [exp.Star]
        and source is not None
        and not query.args.get("joins")
        and not isinstance(tree.this, exp.Schema)
    ):  # PostgreSQL expanded the `*` when the view was made
        query.set("expressions", [exp.column(c, quoted=True) for c in old])
    plain = (
        isinstance(query, exp.Select)
        and len(query.expressions) == len(columns)
        and not any(isinstance(e, exp.Star) or e.find(exp.Star) for e in query.expressions)
        and not isinstance(tree.this, exp.Schema)
    )
    if plain:  # the select list names them: `SELECT b AS c`, as PostgreSQL shows it
        query.set(
            "expressions",
            [
                e if e.alias_or_name == name else exp.alias_(e.unalias(), name, quoted=True)
                for e, name in zip(query.expressions, columns, strict=True)
            ],
        )
        tree.set("this", target)
    else:  # `*` or a set operation: the view's own column list `v (id, c)`
        names = [exp.to_identifier(c, quoted=True) for c in columns]
        tree.set("this", exp.Schema(this=target, expressions=names))
    tree.set("replace", True)
    return tree.sql(dialect="duckdb")
