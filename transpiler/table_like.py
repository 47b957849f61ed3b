"""`CREATE TABLE t (LIKE src [INCLUDING | EXCLUDING option ...], ...)`.

DuckDB has no LIKE clause. The transpiler puts a placeholder column where each LIKE
stood (`__hati_like_<i>__ INTEGER`) and hands the server the CREATE TABLE with them
(`TableLike.sql`) and what each one copies; the server reads the source table's
columns, constraints and indexes and puts them in (proxy/pgserver/table_like.py).

As PostgreSQL: the columns' names, types and NOT NULL are always copied; DEFAULTS the
column defaults (a serial's `nextval` too, sharing its sequence), CONSTRAINTS the CHECK
constraints, INDEXES the primary key, unique constraints and indexes, COMMENTS the
column comments; ALL every option, EXCLUDING x takes one back. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from transpiler.errors import TranspileError

OPTIONS = frozenset(
    {
        "COMMENTS",
        "COMPRESSION",
        "CONSTRAINTS",
        "DEFAULTS",
        "GENERATED",
        "IDENTITY",
        "INDEXES",
        "STATISTICS",
        "STORAGE",
    }
)


def placeholder(i: int) -> str:
    return f"__hati_like_{i}__"


@dataclass(frozen=True, slots=True)
class LikeSource:
    schema: str  # '' when not written: the search path decides
    table: str
    options: frozenset[str]  # of OPTIONS, after INCLUDING / EXCLUDING in order


@dataclass(frozen=True, slots=True)
class TableLike:
    """The CREATE TABLE (DuckDB SQL) with a placeholder column per LIKE, in order."""

    schema: str
    table: str
    sources: tuple[LikeSource, ...]
    sql: str = ""


def extract(tree: exp.Expr) -> TableLike | None:
    """Replace each LIKE of a CREATE TABLE's column list by its placeholder column (in
    place); None when there is none."""
    if not isinstance(tree, exp.Create) or not isinstance(tree.this, exp.Schema):
        return None
    sources = []
    for node in list(tree.this.expressions):
        if not isinstance(node, exp.LikeProperty):
            continue
        source = node.this
        if not isinstance(source, exp.Table):
            raise TranspileError("42601", "syntax error: LIKE needs a table name")
        options: set[str] = set()
        for prop in node.expressions:
            word = prop.name.upper() if isinstance(prop, exp.Property) else ""
            value = prop.text("value").upper() if isinstance(prop, exp.Property) else ""
            chosen = OPTIONS if value == "ALL" else {value}
            if word not in ("INCLUDING", "EXCLUDING") or not chosen <= OPTIONS:
                raise TranspileError(
                    "42601", f"syntax error at or near {prop.sql(dialect='postgres')!r}"
                )
            options = options | chosen if word == "INCLUDING" else options - chosen
        schema = source.text("db")
        sources.append(
            LikeSource("main" if schema == "public" else schema, source.name, frozenset(options))
        )
        column = exp.ColumnDef(
            this=exp.to_identifier(placeholder(len(sources) - 1)),
            kind=exp.DataType.build("INT"),
        )
        node.replace(column)
    if not sources:
        return None
    table = tree.this.this
    schema = table.text("db") if isinstance(table, exp.Table) else ""
    name = table.name if isinstance(table, exp.Table) else ""
    return TableLike("main" if schema == "public" else schema, name, tuple(sources))


def without_data(tree: exp.Expr) -> bool:
    """`CREATE TABLE t AS query WITH NO DATA`: the query's columns, no rows (DuckDB has
    no such clause: the query is read with LIMIT 0). Whether the tree had it."""
    props = tree.args.get("properties") if isinstance(tree, exp.Create) else None
    found = [p for p in (props.expressions if props else []) if isinstance(p, exp.WithDataProperty)]
    if not found:
        return False
    for prop in found:
        prop.pop()
    if not found[0].args.get("no"):
        return False
    query = tree.expression
    if isinstance(query, exp.Query):
        tree.set("expression", exp.select("*").from_(query.subquery("__hati_no_data")).limit(0))
    return True


def created_table(tree: exp.Create) -> tuple[str, str] | None:
    """(schema or '', table) a CREATE TABLE ... AS makes."""
    table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not isinstance(table, exp.Table) or table.text("catalog"):
        return None
    schema = table.text("db")
    return ("main" if schema == "public" else schema), table.name
