"""Moving a sequence back: `setval` to a lower value, `ALTER SEQUENCE ... RESTART`,
`TRUNCATE ... RESTART IDENTITY` (Django's `flush`, then `loaddata`'s sequence reset).

A DuckDB sequence only moves forward (nextval), and DuckDB has no ALTER SEQUENCE RESTART.
So a sequence that must go back is made again: the column defaults that draw from it
are dropped, the sequence dropped and created with the same options (start, increment,
bounds, cycle), the defaults set again; then it is moved forward to the value wanted by
drawing (the `setval` macro, proxy/db/catalog/50_functions.sql). All of it runs in the
caller's transaction, or in one of its own: all or nothing, as in PostgreSQL.

DROP TABLE drops the sequences of the table's serial columns with it, as PostgreSQL drops
the sequences a column OWNS: `<table>_<column>_seq` drawn by that column's default
(transpiler/serial_columns.py names them so; pg_depend shows them owned, 'a').
"""

from __future__ import annotations

import re
from typing import Any

from proxy.core.sqltext import quote_ident
from proxy.pgserver.constraint_ddl import alter_around_indexes

_NEXTVAL = re.compile(r"nextval\('((?:[^']|'')+)'", re.IGNORECASE)


def _unquote(part: str) -> str:
    part = part.strip()
    if part.startswith('"') and part.endswith('"'):
        return part[1:-1].replace('""', '"')
    return part


def split_name(qualified: str) -> tuple[str | None, str]:
    """(schema or None, name) of a sequence name as setval / nextval take it."""
    parts = re.findall(r'"(?:[^"]|"")*"|[^.]+', qualified)
    names = [_unquote(p) for p in parts]
    schema = names[-2] if len(names) > 1 else None
    return ("main" if schema == "public" else schema), names[-1]


def find_sequence(cur: Any, qualified: str) -> tuple[str, str] | None:
    """(schema, name) of the DuckDB sequence a PostgreSQL sequence name means, or None."""
    schema, name = split_name(qualified)
    row = cur.execute(
        "SELECT schema_name, sequence_name FROM system.main.duckdb_sequences() WHERE sequence_name = ? "
        "AND (? IS NULL OR schema_name = ?) AND database_name <> 'temp' "
        "ORDER BY schema_name <> 'main' LIMIT 1",
        [name, schema, schema],
    ).fetchone()
    return (row[0], row[1]) if row else None


def next_value(cur: Any, schema: str, name: str) -> tuple[int, int]:
    """(the value nextval would give now, increment)."""
    row = cur.execute(
        "SELECT coalesce(last_value + increment_by, start_value), increment_by "
        "FROM system.main.duckdb_sequences() WHERE schema_name = ? AND sequence_name = ?",
        [schema, name],
    ).fetchone()
    return int(row[0]), int(row[1])


# Beyond this many values to draw, setval makes the sequence again starting at the value
# instead (Rails fixtures' ids are hashes up to 2^30: drawing to one took 98 s).
MAX_DRAWS = 10_000


def needs_recreate(
    cur: Any, qualified: str, value: int, called: bool
) -> tuple[str, str, int | None] | None:
    """(schema, name, new start or None: its own) of the sequence, when `setval(qualified,
    value, called)` moves it back, or forward by more than MAX_DRAWS values; else None."""
    found = find_sequence(cur, qualified)
    if found is None:
        return None
    nxt, inc = next_value(cur, *found)
    wanted = value + inc if called else value
    behind = wanted < nxt if inc > 0 else wanted > nxt
    start, low, high = cur.execute(
        "SELECT start_value, min_value, max_value FROM system.main.duckdb_sequences() "
        "WHERE schema_name = ? AND sequence_name = ?",
        list(found),
    ).fetchone()
    # then drawn from `start` (or from where it is now) up to the value; a start past the
    # value (made again at a value before) cannot be drawn back to it
    draws = (value - (start if behind else nxt)) // inc
    if not behind:  # forward, or already there (setval to the value it last gave): draws
        draws = max(draws, 0)
    if (draws > MAX_DRAWS or draws < 0) and low <= value <= high:
        return (*found, value)  # made again at the value: only its start_value differs
    return (*found, None) if behind else None


def dependents(cur: Any, schema: str, name: str) -> list[tuple[str, str, str, str]]:
    """(schema, table, column, default) of every column whose default draws from it."""
    rows = cur.execute(
        "SELECT schema_name, table_name, column_name, column_default FROM system.main.duckdb_columns() "
        "WHERE column_default ILIKE '%nextval(%' AND database_name <> 'temp'"
    ).fetchall()
    out = []
    for t_schema, table, column, default in rows:
        for m in _NEXTVAL.finditer(default):
            d_schema, d_name = split_name(m[1].replace("''", "'"))
            same_schema = d_schema == schema or (d_schema is None and schema in (t_schema, "main"))
            if d_name == name and same_schema:
                out.append((t_schema, table, column, default))
                break
    return out


def recreate(cur: Any, schema: str, name: str, changes: dict[str, Any] | None = None) -> None:
    """Make the sequence again, fresh (its next value is its start), keeping its options
    (but `changes`: start, inc, low, high, cycle; an identity's SET INCREMENT BY, ...)
    and the column defaults that draw from it. In the caller's transaction."""
    opts = cur.execute(
        "SELECT start_value, increment_by, min_value, max_value, cycle FROM system.main.duckdb_sequences() "
        "WHERE schema_name = ? AND sequence_name = ?",
        [schema, name],
    ).fetchone()
    now = dict(zip(("start", "inc", "low", "high", "cycle"), opts, strict=True))
    now.update(changes or {})
    start, inc, low, high, cycle = now.values()
    seq = f"{quote_ident(schema)}.{quote_ident(name)}"
    deps = dependents(cur, schema, name)
    for t_schema, table, column, _ in deps:
        alter_around_indexes(
            cur,
            f"ALTER TABLE {quote_ident(t_schema)}.{quote_ident(table)} "
            f"ALTER COLUMN {quote_ident(column)} DROP DEFAULT",
        )
    cur.execute(f"DROP SEQUENCE {seq}")
    cur.execute(
        f"CREATE SEQUENCE {seq} INCREMENT BY {inc} MINVALUE {low} MAXVALUE {high} "
        f"START WITH {start} {'CYCLE' if cycle else 'NO CYCLE'}"
    )
    for t_schema, table, column, default in deps:
        alter_around_indexes(
            cur,
            f"ALTER TABLE {quote_ident(t_schema)}.{quote_ident(table)} "
            f"ALTER COLUMN {quote_ident(column)} SET DEFAULT {default}",
        )


def table_sequences(cur: Any, schema: str | None, table: str) -> list[tuple[str, str]]:
    """The sequences the table's column defaults draw from (its serial / identity columns)."""
    rows = cur.execute(
        "SELECT schema_name, column_default FROM system.main.duckdb_columns() WHERE table_name = ? "
        "AND (? IS NULL OR schema_name = ?) AND column_default ILIKE '%nextval(%' "
        "AND database_name <> 'temp'",
        [table, schema, schema],
    ).fetchall()
    out: list[tuple[str, str]] = []
    for t_schema, default in rows:
        for m in _NEXTVAL.finditer(default):
            d_schema, d_name = split_name(m[1].replace("''", "'"))
            found = find_sequence(
                cur, f"{quote_ident(d_schema or t_schema)}.{quote_ident(d_name)}"
            ) or find_sequence(cur, quote_ident(d_name))
            if found is not None and found not in out:
                out.append(found)
    return out


def restart_identity(cur: Any, tables: list[tuple[str | None, str]]) -> None:
    """`TRUNCATE ... RESTART IDENTITY`: the sequences of these tables start again."""
    for schema, table in tables:
        for seq_schema, seq_name in table_sequences(cur, schema, table):
            recreate(cur, seq_schema, seq_name)


def owned_sequences(cur: Any, tables: tuple[tuple[str | None, str], ...]) -> list[tuple[str, str]]:
    """The serial sequences of these tables' columns: `<table>_<column>_seq` drawn by that
    column's default. A table without a schema is the one in main if there is one."""
    out: list[tuple[str, str]] = []
    for schema, table in tables:
        rows = cur.execute(
            "SELECT schema_name, column_name, column_default FROM system.main.duckdb_columns() "
            "WHERE lower(table_name) = lower(?) AND (? IS NULL OR schema_name = ?) "
            "AND column_default ILIKE '%nextval(%' AND database_name <> 'temp' "
            "ORDER BY schema_name <> 'main', schema_name",
            [table, schema, schema],
        ).fetchall()
        first = rows[0][0] if rows else None
        for t_schema, column, default in rows:
            if t_schema != first:
                continue
            for m in _NEXTVAL.finditer(default):
                d_schema, d_name = split_name(m[1].replace("''", "'"))
                owned = d_name.lower() == f"{table}_{column}_seq".lower()
                if owned and d_schema in (None, t_schema) and (t_schema, d_name) not in out:
                    out.append((t_schema, d_name))
    return out


def drop_unused(cur: Any, sequences: list[tuple[str, str]]) -> None:
    """Drop these sequences, each unless a column default still draws from it."""
    for schema, name in sequences:
        if not dependents(cur, schema, name):
            cur.execute(f"DROP SEQUENCE IF EXISTS {quote_ident(schema)}.{quote_ident(name)}")
