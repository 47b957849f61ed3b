"""Functions the server answers itself, declared to the catalog so pg_proc and \\df list them.

DuckDB does not know them as functions: the transpiler rewrites semantic SQL, the wire
server runs hatiproxy_embed_column, the SQL bridge runs the agent functions. Their
declarations sit in `__hati_function_decl` (50_functions.sql; the semantic ones are
85_server_functions.sql); `declare()` adds more (the agent layer declares the registry's
agent functions when it starts) and `refresh()` rebuilds the rows pg_proc reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from proxy.core.names import PG_SCHEMA

DECL = f"{PG_SCHEMA}.__hati_function_decl"
ROWS = f"{PG_SCHEMA}.__hati_functions"


@dataclass(frozen=True)
class FunctionDecl:
    """One function as pg_proc shows it. Types are DuckDB type names ('ANY': anyelement);
    a default is a SQL literal ('5', "''", 'NULL', 'true') or None (required)."""

    name: str
    args: Sequence[tuple[str, str, str | None]]  # (name, type, default)
    columns: Sequence[tuple[str, str]] | None = None  # a table function's result columns
    returns: str | None = None  # a scalar function's result type
    description: str = ""


def declare(conn: duckdb.DuckDBPyConnection, functions: Sequence[FunctionDecl]) -> None:
    """Declare (or declare again) these functions, replacing any of the same names.
    Declaring what is declared already changes nothing (the server declares the agent
    functions with the catalog install, then again once its agent layer is built)."""
    rows = [_row(f) for f in functions]
    names = sorted({f.name for f in functions})
    have = conn.execute(f"SELECT * FROM {DECL} WHERE list_contains(?, name)", [names]).fetchall()
    if sorted(map(repr, have)) == sorted(map(repr, rows)):
        return
    add(conn, functions)
    refresh(conn)


def add(conn: duckdb.DuckDBPyConnection, functions: Sequence[FunctionDecl]) -> None:
    """`declare` without the refresh of pg_proc's rows (the caller refreshes)."""
    names = sorted({f.name for f in functions})
    if names:
        conn.execute(f"DELETE FROM {DECL} WHERE list_contains(?, name)", [names])
    if functions:
        conn.executemany(
            f"INSERT INTO {DECL} VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [_row(f) for f in functions]
        )


def _row(f: FunctionDecl) -> tuple[object, ...]:
    return (
        f.name,
        [a[0] for a in f.args],
        [a[1] for a in f.args],
        [a[2] for a in f.args],
        None if f.columns is None else [c[0] for c in f.columns],
        [c[1] for c in f.columns] if f.columns is not None else [f.returns],
        f.columns is not None,
        f.description or None,
    )


def refresh(conn: duckdb.DuckDBPyConnection) -> None:
    """Rebuild pg_proc's rows of the declared functions (their oids, types and texts)."""
    conn.execute(f"DELETE FROM {ROWS}")
    conn.execute(f"INSERT INTO {ROWS} SELECT * FROM {PG_SCHEMA}.__hati_function_view")
