"""DuckDB's unique violation in PostgreSQL's words: the constraint's name and the key.

DuckDB says `Duplicate key "code: A" violates unique constraint.`; PostgreSQL says
`duplicate key value violates unique constraint "items_code_key"` with DETAIL `Key
(code)=(A) already exists.` and names the constraint, table and schema in the
ErrorResponse's fields, which applications read to tell one unique rule from another
(psycopg's `diag.constraint_name`). DuckDB does not name the table: it is the target of
the statement that failed, and its unique indexes (the catalog's names, as pg_index lists
them) are matched against the key's columns. Read on a connection of its own: the failed
statement's transaction may be aborted. A table made in the same open transaction is not
seen there, and an unmatched key keeps DuckDB's message (the SQLSTATE is 23505 either way).
A NOT NULL violation (23502) gets its table's schema here too.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

import duckdb

from proxy.wire.errors import PgError
from transpiler.constraint_ddl import write_target

_DUPLICATE = re.compile(
    r'^Duplicate key "(?P<key>.*)" violates (?:unique|primary key) constraint\.?$', re.DOTALL
)


def name_violation(cur: Any, err: PgError, sql: str | None) -> None:
    if err.sqlstate == "23502":  # a NOT NULL column: its table's schema (the write's target)
        target = write_target(sql) if sql and err.table_name else None
        schema = (target[0] if target else None) or "public"
        err.schema_name = "public" if schema == "main" else schema
        return
    found = _DUPLICATE.match(err.message)
    target = write_target(sql) if found is not None and sql else None
    if found is None or target is None:
        return
    schema, table = target
    with contextlib.suppress(duckdb.Error):
        own = cur.cursor()  # a connection of its own (see above)
        try:
            keys = own.execute(
                "SELECT index_name, schema_name, elements FROM __hati_catalog.pg.__hati_index_list "
                "WHERE is_unique AND lower(table_name) = lower(?) "
                "AND (? IS NULL OR lower(schema_name) = lower(?)) ORDER BY indexrelid",
                [table, schema, "main" if schema == "public" else schema],
            ).fetchall()
        finally:
            own.close()
        for name, schema_name, elements in keys:
            parts = [_element(e) for e in elements]
            shown = [_partial_key(p) for p in parts]
            pattern = ", ".join(
                (re.escape(p) if k == p else _PARTIAL_MESSAGE.format(re.escape(k))) + ": (.*)"
                for p, k in zip(parts, shown, strict=True)
            )
            values = re.fullmatch(pattern, found["key"], re.DOTALL)
            if values is None:
                continue
            err.message = f'duplicate key value violates unique constraint "{name}"'
            err.detail = f"Key ({', '.join(shown)})=({', '.join(values.groups())}) already exists."
            err.schema_name = "public" if schema_name == "main" else schema_name
            err.table_name, err.constraint_name = table, name
            return


# A partial unique index's key (transpiler/create_index.py: `CASE WHEN <where> THEN <col>
# END`), as DuckDB keeps it and as its violation message prints it.
_PARTIAL_KEY = re.compile(r"^CASE\s+WHEN \((.*)\) THEN \((.*)\) ELSE NULL END$", re.DOTALL)
_PARTIAL_MESSAGE = r"CASE\s+WHEN .*? THEN \({}\) ELSE .*? END"


def _partial_key(element: str) -> str:
    """The column of a partial unique index's key, PostgreSQL's name for it."""
    found = _PARTIAL_KEY.match(element)
    return found[2] if found else element


def _element(text: str) -> str:
    """An index element as DuckDB's message names it: an expression without its outer
    parentheses."""
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text
