"""A table's CREATE TABLE re-targeted to another schema, with all its constraints.

Built from DuckDB's own DDL text (`system.main.duckdb_tables().sql`: column types, collations, DEFAULT,
NOT NULL, CHECK, PRIMARY KEY, UNIQUE, generated columns) and DuckDB's catalog for foreign keys:
DuckDB renders a self-referencing foreign key as an empty list item and does not quote the
referenced table's name, and a foreign key can only point into its own schema, so every
FOREIGN KEY item is rebuilt from `system.main.duckdb_constraints()` to point at
`"<dst_schema>"."<table>"`. Sequence names in defaults are qualified (branch_seq.requalify).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import duckdb

from proxy.agent.branches.fk import foreign_keys, of_table
from proxy.agent.branches.seq import requalify
from proxy.core.sqltext import quote_ident

_IDENT = re.compile(r'"(?:[^"]|"")*"|[^".(\s]+')
_FOREIGN = re.compile(r"FOREIGN\s+KEY\b", re.I)
_TABLE_CONSTRAINT = re.compile(r"(PRIMARY\s+KEY|UNIQUE|CHECK|CONSTRAINT|FOREIGN\s+KEY)\b", re.I)
_GENERATED = re.compile(r"\bGENERATED\s+ALWAYS\s+AS\b", re.I)
_OPEN, _CLOSE = "([{", ")]}"


def _skip_name(text: str, pos: int) -> int | None:
    """Offset after the (possibly qualified, possibly quoted) name starting at `pos`."""
    while True:
        match = _IDENT.match(text, pos)
        if match is None:
            return None
        pos = match.end()
        if not text.startswith(".", pos):
            return pos
        pos += 1


def _name_end(ddl: str) -> int | None:
    """Offset of the '(' after the table name of DuckDB's `CREATE TABLE name(...)`."""
    head = "CREATE TABLE "
    pos = _skip_name(ddl, len(head)) if ddl.startswith(head) else None
    return pos if pos is not None and ddl.startswith("(", pos) else None


_INDEX = re.compile(r"CREATE (UNIQUE )?INDEX ", re.I)


def index_sql(
    cur: duckdb.DuckDBPyConnection, src_schema: str, src: str, dst_schema: str, dst: str
) -> list[str]:
    """src's CREATE [UNIQUE] INDEX statements (DuckDB's text) re-targeted to dst. A UNIQUE
    index enforces uniqueness like a constraint but is not listed in system.main.duckdb_constraints()."""
    out = []
    for (sql,) in cur.execute(
        "SELECT sql FROM system.main.duckdb_indexes() WHERE schema_name = ? AND table_name = ? "
        "AND database_name = system.main.current_database() AND sql IS NOT NULL "
        "ORDER BY index_oid",
        [src_schema, src],
    ).fetchall():
        head = _INDEX.match(sql)
        name_end = _skip_name(sql, head.end()) if head else None
        if name_end is None or not sql.startswith(" ON ", name_end):
            continue
        table_end = _skip_name(sql, name_end + 4)
        if table_end is None or not sql.startswith("(", table_end):
            continue
        out.append(
            f"{sql[: name_end + 4]}{quote_ident(dst_schema)}.{quote_ident(dst)}{sql[table_end:]}"
        )
    return out


def _retarget(ddl: str, schema: str, table: str) -> str | None:
    """DuckDB's `CREATE TABLE [s.]t(...)` text re-targeted to `"schema"."table"`; None if the
    text does not have the expected shape."""
    pos = _name_end(ddl)
    return (
        None
        if pos is None
        else f"CREATE TABLE {quote_ident(schema)}.{quote_ident(table)}{ddl[pos:]}"
    )


def split_items(body: str) -> list[str]:
    """The top-level comma-separated items of a list body, stripped (quotes and brackets
    respected)."""
    items, depth, start, i = [], 0, 0, 0
    while i < len(body):
        ch = body[i]
        if ch in "'\"":
            i += 1
            while i < len(body):
                if body[i] == ch and body.startswith(ch * 2, i):
                    i += 2
                    continue
                if body[i] == ch:
                    break
                i += 1
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i].strip())
            start = i + 1
        i += 1
    items.append(body[start:].strip())
    return items


def _unquote(token: str) -> str:
    return token[1:-1].replace('""', '"') if token.startswith('"') else token


@dataclass
class TableDDL:
    sql: str
    generated: set[str] = field(default_factory=set)  # lower-case: not insertable
    unenforced: list[str] = field(default_factory=list)  # foreign keys left out, as text


def _table_sql(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> str | None:
    row = cur.execute(
        "SELECT sql FROM system.main.duckdb_tables() WHERE schema_name = ? AND table_name = ? "
        "AND database_name = system.main.current_database()",
        [schema, table],
    ).fetchone()
    return row[0] if row else None


def has_key(cur: duckdb.DuckDBPyConnection, schema: str, table: str, cols: tuple) -> bool:
    """Whether schema.table has a PRIMARY KEY or UNIQUE on exactly `cols` (a foreign key
    target)."""
    want = sorted(c.lower() for c in cols)
    rows = cur.execute(
        "SELECT constraint_column_names FROM system.main.duckdb_constraints() WHERE schema_name = ? "
        "AND lower(table_name) = lower(?) AND constraint_type IN ('PRIMARY KEY', 'UNIQUE') "
        "AND database_name = system.main.current_database()",
        [schema, table],
    ).fetchall()
    return any(sorted(c.lower() for c in names) == want for (names,) in rows)


def table_ddl(
    cur: duckdb.DuckDBPyConnection,
    src_schema: str,
    src: str,
    dst_schema: str,
    dst: str,
    *,
    move_sequences: bool = False,
) -> TableDDL | None:
    """CREATE TABLE "dst_schema"."dst" like src_schema.src (see the module docstring); None if
    DuckDB's text does not have the expected shape. A foreign key is kept when its target
    exists in dst_schema with a matching key (the caller creates targets first); else it is
    listed in `unenforced`. move_sequences: see branch_seq.requalify."""
    ddl = (_table_sql(cur, src_schema, src) or "").rstrip().rstrip(";").rstrip()
    pos = _name_end(ddl)
    if pos is None or not ddl.endswith(")"):
        return None
    out = TableDDL("")
    items = []
    for item in split_items(ddl[pos + 1 : -1]):
        if not item or _FOREIGN.match(item):
            continue  # rebuilt below (an empty item is DuckDB's self-referencing key)
        if not _TABLE_CONSTRAINT.match(item):  # a column definition
            token = _IDENT.match(item)
            if token is not None and _GENERATED.search(item):
                out.generated.add(_unquote(token.group(0)).lower())
            item = requalify(cur, item, src_schema, dst_schema if move_sequences else None)
        items.append(item)
    for fk in of_table(foreign_keys(cur, src_schema), src):
        own = fk.parent == src.lower()
        target = dst if own else fk.ref_table
        if not own and not has_key(cur, dst_schema, target, fk.ref_columns):
            out.unenforced.append(f"({', '.join(fk.columns)}) -> {fk.ref_table}")
            continue
        cols = ", ".join(quote_ident(c) for c in fk.columns)
        refs = ", ".join(quote_ident(c) for c in fk.ref_columns)
        items.append(
            f"FOREIGN KEY ({cols}) REFERENCES {quote_ident(dst_schema)}.{quote_ident(target)}({refs})"
        )
    out.sql = f"CREATE TABLE {quote_ident(dst_schema)}.{quote_ident(dst)}({', '.join(items)})"
    return out
