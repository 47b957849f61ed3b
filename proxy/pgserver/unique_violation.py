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
A duplicate within the statement or the open transaction DuckDB reports by the key's
values alone (`PRIMARY KEY or UNIQUE constraint violation: duplicate key "1, a"`): the
unique index is then the one whose columns can hold those values, when only one can.
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
_LOCAL_DUPLICATE = re.compile(
    r'^PRIMARY KEY or UNIQUE constraint violation: duplicate key "(?P<key>.*)"$', re.DOTALL
)


def name_violation(cur: Any, err: PgError, sql: str | None) -> None:
    if err.sqlstate == "23502":  # a NOT NULL column: its table's schema (the write's target)
        target = write_target(sql) if sql and err.table_name else None
        schema = (target[0] if target else None) or "public"
        err.schema_name = "public" if schema == "main" else schema
        return
    found = _DUPLICATE.match(err.message)
    local = _LOCAL_DUPLICATE.match(err.message) if found is None else None
    target = write_target(sql) if (found or local) is not None and sql else None
    if target is None:
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
            if found is not None:
                named = _by_columns(keys, found["key"])
            else:
                named = _by_values(own, table, keys, local["key"]) if local else None
        finally:
            own.close()
        if named is None:
            return
        name, schema_name, shown, values = named
        err.message = f'duplicate key value violates unique constraint "{name}"'
        err.detail = f"Key ({', '.join(shown)})=({', '.join(values)}) already exists."
        err.schema_name = "public" if schema_name == "main" else schema_name
        err.table_name, err.constraint_name = table, name


Named = tuple[str, str, list[str], list[str]]  # index, schema, key columns, key values


def _by_columns(keys: list[Any], key: str) -> Named | None:
    """The index whose columns DuckDB's message names (`code: A, n: 1`)."""
    for name, schema_name, elements in keys:
        parts = [_element(e) for e in elements]
        shown = [_partial_key(p) for p in parts]
        pattern = ", ".join(
            (re.escape(p) if k == p else _PARTIAL_MESSAGE.format(re.escape(k))) + ": (.*)"
            for p, k in zip(parts, shown, strict=True)
        )
        values = re.fullmatch(pattern, key, re.DOTALL)
        if values is not None:
            return name, schema_name, shown, list(values.groups())
    return None


def _by_values(own: Any, table: str, keys: list[Any], key: str) -> Named | None:
    """The one index whose columns can hold the key's values (`1, a`): as many columns as
    values, each value castable to its column's type; None when none or several can."""
    fits: list[Named] = []
    for name, schema_name, elements in keys:
        shown = [_partial_key(_element(e)) for e in elements]
        values = [key] if len(shown) == 1 else key.split(", ")
        if len(values) != len(shown):
            continue  # a value holding ", " is not told apart: DuckDB's words stay
        types = dict(
            own.execute(
                "SELECT column_name, data_type FROM system.main.duckdb_columns() WHERE lower(table_name) = lower(?) "
                "AND schema_name = ?",
                [table, schema_name],
            ).fetchall()
        )
        if all(
            column in types
            and own.execute(
                f"SELECT TRY_CAST(? AS {types[column]}) IS NOT NULL", [value]
            ).fetchone()[0]
            for column, value in zip(shown, values, strict=True)
        ):
            fits.append((name, schema_name, shown, values))
    return fits[0] if len(fits) == 1 else None


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
