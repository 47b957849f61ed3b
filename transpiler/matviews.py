"""Materialized views: PostgreSQL's statements as DuckDB statements on a stored table.

DuckDB has no materialized views. A materialized view is kept as a table of the same
name holding its rows, plus a row in the database's registry `main.__hati_matviews`
(its defining query as written and as DuckDB runs it, whether it is populated), which
the catalog reads to show the table as relkind 'm' (proxy/db/catalog/30_relations.sql)
and the server reads to REFRESH it (proxy/pgserver/matviews.py).

`parse(text, transpile_query)` reads CREATE / REFRESH / DROP / ALTER MATERIALIZED VIEW
and returns the statement's `MatviewDdl` with the DuckDB SQL the ownership and table
limit checks read (`sql`: the stored table's CREATE TABLE AS / DELETE / DROP TABLE /
ALTER TABLE). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from transpiler.errors import TranspileError

Action = Literal["create", "refresh", "drop", "rename", "rename_column", "set_schema"]
_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
# [database.][schema.]name: the database part is the connection's own (PostgreSQL refuses
# another), so it is dropped
_NAME = rf"(?P<name>{_IDENT}(?:\s*\.\s*{_IDENT}){{0,2}})"
_CREATE = re.compile(
    rf"^\s*CREATE\s+MATERIALIZED\s+VIEW\s+(?P<ine>IF\s+NOT\s+EXISTS\s+)?{_NAME}\s*"
    r"(?:\((?P<cols>[^()]*)\)\s*)?(?:USING\s+\w+\s*)?(?:WITH\s*\([^()]*\)\s*)?"
    r"(?:TABLESPACE\s+\w+\s*)?AS\s+(?P<query>.*?)"
    r"(?:\s+WITH\s+(?P<no>NO\s+)?DATA)?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_REFRESH = re.compile(
    rf"^\s*REFRESH\s+MATERIALIZED\s+VIEW\s+(?P<conc>CONCURRENTLY\s+)?{_NAME}"
    r"(?:\s+WITH\s+(?P<no>NO\s+)?DATA)?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_DROP = re.compile(
    r"^\s*DROP\s+MATERIALIZED\s+VIEW\s+(?P<ie>IF\s+EXISTS\s+)?(?P<names>.*?)"
    r"(?:\s+(?P<mode>CASCADE|RESTRICT))?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_ALTER = re.compile(
    rf"^\s*ALTER\s+MATERIALIZED\s+VIEW\s+(?P<ie>IF\s+EXISTS\s+)?{_NAME}\s+"
    rf"(?:RENAME\s+TO\s+(?P<new>{_IDENT})"
    rf"|RENAME\s+(?:COLUMN\s+)?(?P<col>{_IDENT})\s+TO\s+(?P<newcol>{_IDENT})"
    rf"|SET\s+SCHEMA\s+(?P<schema>{_IDENT}))\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_NAMES = re.compile(rf"\s*(?P<name>{_IDENT}(?:\s*\.\s*{_IDENT}){{0,2}})\s*(?:,|$)")


@dataclass(frozen=True, slots=True)
class MatviewDdl:
    """One materialized-view statement. `names`: (schema or '', name) as PostgreSQL
    folds them (unquoted: lower case); schema 'public' is DuckDB's 'main'."""

    action: Action
    names: tuple[tuple[str, str], ...]
    query: str = ""  # create: the defining query as DuckDB runs it
    definition: str = ""  # create: the query as written (pg_matviews.definition)
    with_data: bool = True  # WITH [NO] DATA
    if_exists: bool = False  # CREATE: IF NOT EXISTS; DROP / ALTER: IF EXISTS
    concurrently: bool = False
    cascade: bool = False
    new_name: str = ""  # rename: the new relation name; rename_column: the new column
    column: str = ""  # rename_column: the column renamed; set_schema: the new schema


_HEAD = re.compile(r"^\s*(?:CREATE|DROP|ALTER|REFRESH)\s+MATERIALIZED\s+VIEW\b", re.IGNORECASE)
_COMMENT = re.compile(r"^(\s*COMMENT\s+ON\s+)MATERIALIZED\s+VIEW\b", re.IGNORECASE)


def is_matview(text: str) -> bool:
    """Whether a statement is a materialized-view statement (REFRESH is one token to
    sqlglot's tokenizer, with the rest of the text: the text decides)."""
    return _HEAD.match(text) is not None


def comment_on_table(text: str) -> str | None:
    """COMMENT ON MATERIALIZED VIEW as COMMENT ON TABLE (its stored table), else None."""
    match = _COMMENT.match(text)
    return None if match is None else match[1] + "TABLE" + text[match.end() :]


def _unquote(part: str) -> str:
    part = part.strip()
    if part.startswith('"'):
        return part[1:-1].replace('""', '"')
    return part.lower()


def split_name(text: str) -> tuple[str, str]:
    """(schema or '', name) of a possibly qualified name as written."""
    parts = re.findall(_IDENT, text)
    name = _unquote(parts[-1])
    schema = _unquote(parts[-2]) if len(parts) > 1 else ""
    return ("main" if schema == "public" else schema), name


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def qualified(schema: str, name: str) -> str:
    return f"{ident(schema)}.{ident(name)}" if schema else ident(name)


def parse(text: str, transpile_query: Callable[[str], str]) -> tuple[MatviewDdl, str]:
    """The statement and the DuckDB SQL on its stored table (see the module doc).
    `transpile_query`: the DuckDB SQL of a query (raises TranspileError)."""
    head = text.split(None, 1)[0].upper()
    if head == "CREATE":
        return _create(text, transpile_query)
    if head == "REFRESH":
        match = _REFRESH.match(text)
        if match is None:
            raise _syntax("REFRESH MATERIALIZED VIEW [CONCURRENTLY] name [WITH [NO] DATA]")
        schema, name = split_name(match["name"])
        ddl = MatviewDdl(
            "refresh",
            ((schema, name),),
            with_data=not match["no"],
            concurrently=bool(match["conc"]),
        )
        return ddl, f"DELETE FROM {qualified(schema, name)}"
    if head == "DROP":
        match = _DROP.match(text)
        names = _names(match["names"]) if match is not None else None
        if match is None or not names:
            raise _syntax("DROP MATERIALIZED VIEW [IF EXISTS] name [, ...] [CASCADE | RESTRICT]")
        cascade = (match["mode"] or "").upper() == "CASCADE"
        ddl = MatviewDdl("drop", names, if_exists=bool(match["ie"]), cascade=cascade)
        exists = " IF EXISTS" if ddl.if_exists else ""
        tail = " CASCADE" if cascade else ""
        sql = "; ".join(f"DROP TABLE{exists} {qualified(s, n)}{tail}" for s, n in names)
        return ddl, sql
    return _alter(text)


def _create(text: str, transpile_query: Callable[[str], str]) -> tuple[MatviewDdl, str]:
    match = _CREATE.match(text)
    if match is None:
        raise _syntax("CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(columns)] AS query")
    schema, name = split_name(match["name"])
    written = match["query"].strip()
    query = transpile_query(written)
    cols = match["cols"]
    if cols:
        names = ", ".join(ident(_unquote(c)) for c in cols.split(","))
        query = f"SELECT * FROM ({query}) AS __hati_mv({names})"
    ddl = MatviewDdl(
        "create",
        ((schema, name),),
        query=query,
        definition=f" {written};",
        with_data=not match["no"],
        if_exists=bool(match["ine"]),
    )
    exists = "IF NOT EXISTS " if ddl.if_exists else ""
    rows = query if ddl.with_data else f"SELECT * FROM ({query}) AS __hati_mv LIMIT 0"
    return ddl, f"CREATE TABLE {exists}{qualified(schema, name)} AS {rows}"


def _alter(text: str) -> tuple[MatviewDdl, str]:
    match = _ALTER.match(text)
    if match is None:
        raise _syntax(
            "ALTER MATERIALIZED VIEW [IF EXISTS] name RENAME TO new | RENAME [COLUMN] a TO b"
            " | SET SCHEMA s (other forms are not supported)"
        )
    schema, name = split_name(match["name"])
    target = qualified(schema, name)
    ie = bool(match["ie"])
    exists = "IF EXISTS " if ie else ""
    if match["new"]:
        new = _unquote(match["new"])
        ddl = MatviewDdl("rename", ((schema, name),), if_exists=ie, new_name=new)
        return ddl, f"ALTER TABLE {exists}{target} RENAME TO {ident(new)}"
    if match["col"]:
        col, new = _unquote(match["col"]), _unquote(match["newcol"])
        ddl = MatviewDdl("rename_column", ((schema, name),), if_exists=ie, column=col, new_name=new)
        return ddl, f"ALTER TABLE {exists}{target} RENAME COLUMN {ident(col)} TO {ident(new)}"
    new_schema = _unquote(match["schema"])
    new_schema = "main" if new_schema == "public" else new_schema
    ddl = MatviewDdl("set_schema", ((schema, name),), if_exists=ie, column=new_schema)
    # What the checks read: the table made in the new schema, the old one dropped.
    moved = qualified(new_schema, name)
    return ddl, f"CREATE TABLE {moved} AS SELECT * FROM {target}; DROP TABLE {target}"


def _names(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    pos = 0
    while pos < len(text):
        match = _NAMES.match(text, pos)
        if match is None or match.end() == pos:
            return ()
        out.append(split_name(match["name"]))
        pos = match.end()
    return tuple(out)


def _syntax(form: str) -> TranspileError:
    return TranspileError("42601", f"syntax error: expected {form}")
