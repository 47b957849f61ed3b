"""Quoting for SQL the server writes itself (DuckDB and PostgreSQL agree on both forms)."""


def quote_ident(name: str) -> str:
    """An identifier: "name", with embedded quotes doubled."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A string constant: 'text', with embedded quotes doubled."""
    return "'" + text.replace("'", "''") + "'"


# DuckDB plans `x IN (<list>)` of more than 4 values, and `x IN (SELECT unnest(?))` of
# any length, as a hash join: each run builds a hash table in buffer-managed blocks, and
# every block destroyed leaves a dead node in DuckDB's eviction queue that keeps the
# block's handle (~200 B) in the glibc heap until the queue grows large enough to be
# purged (heaptrack under bench/rss.py: the largest native grower; docs/memory.md). Up
# to 4 values are a plain filter, which leaves none.
MAX_INLINE_IN = 4


def in_values(column: str, values: list[object], sql_type: str) -> tuple[str, list[object]]:
    """`column IN (...)` for a list of `sql_type` values and its parameters: each value a
    parameter of its own while there are at most MAX_INLINE_IN, else one list."""
    if 0 < len(values) <= MAX_INLINE_IN:
        marks = ", ".join(f"?::{sql_type}" for _ in values)
        return f"{column} IN ({marks})", list(values)
    return f"{column} IN (SELECT unnest(?::{sql_type}[]))", [list(values)]
