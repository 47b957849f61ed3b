"""PostgreSQL's one-byte "char" type (OID 18) as DuckDB holds it: an ENUM of every label a
catalog "char" column can hold, so the type travels with the column through aliases,
subqueries and joins, and result columns of it are described as "char".

The catalog (proxy/db/catalog/char_columns.py) creates the ENUM from PG_CHAR_ENUM;
types.column_kind recognises DuckDB's spelling of it, which is this same text.
"""

from __future__ import annotations

# '' is PostgreSQL's "char" zero byte (attidentity, attgenerated when unset); then the
# printable ASCII characters, in byte order, as "char" compares (quote and backslash left
# out: no catalog value uses them, and they would need escaping in the type's text).
PG_CHAR_LABELS: tuple[str, ...] = ("",) + tuple(
    chr(i) for i in range(32, 127) if chr(i) not in ("'", "\\")
)
PG_CHAR_ENUM = "ENUM(" + ", ".join(f"'{label}'" for label in PG_CHAR_LABELS) + ")"


def is_pg_char(duckdb_type: str) -> bool:
    """Whether a DuckDB result type (without array brackets) is the catalog's "char"."""
    return duckdb_type == PG_CHAR_ENUM
