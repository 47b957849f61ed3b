"""The pg_type oids of user ENUM types, for RowDescription.

DuckDB describes an enum column as ENUM('a', 'b') (the type's name is lost); the
catalog (proxy/db/catalog/10_types.sql) gives each enum its DuckDB oid and its array type
(_mood) 2^29 + that oid, and matches a column to the one enum with exactly its labels.
The server fills this table the same way (pgserver/enum_columns.py) so RowDescription and
pg_attribute agree; a type string not in it (unknown, or two enums with those labels)
goes out as text, as before.
"""

from __future__ import annotations

import threading

from proxy.wire.oids import PgType

ARRAY_OFFSET = 536870912  # 2^29: an enum's array type oid is this + the enum's oid

_lock = threading.Lock()
_by_text: dict[str, tuple[int, str] | None] = {}  # ENUM('a', 'b') -> (oid, name) / None
_version = 0


def version() -> int:
    """Changes whenever the table does (part of cached RowDescriptions' keys)."""
    return _version


def known(enum_text: str) -> bool:
    return enum_text in _by_text


def replace(entries: dict[str, tuple[int, str] | None]) -> None:
    """The whole table, as read from system.main.duckdb_types() (None: ambiguous labels)."""
    global _by_text, _version
    with _lock:
        if entries != _by_text:
            _by_text = dict(entries)  # swapped whole: readers take no lock
            _version += 1


def clear() -> None:
    """The catalog changed: read it again at the next enum column."""
    replace({})


def pg_type(duckdb_type: str) -> PgType | None:
    """mood / _mood for ENUM('a', 'b') / ENUM('a', 'b')[] when known, else None."""
    is_array = duckdb_type.endswith(")[]")
    found = _by_text.get(duckdb_type[:-2] if is_array else duckdb_type)
    if found is None:
        return None
    oid, name = found
    return PgType(ARRAY_OFFSET + oid, "_" + name, -1) if is_array else PgType(oid, name, 4)


def enum_text(labels: list[str]) -> str:
    """DuckDB's spelling of an enum type with these labels: ENUM('a', 'it''s')."""
    return "ENUM(" + ", ".join("'" + label.replace("'", "''") + "'" for label in labels) + ")"
