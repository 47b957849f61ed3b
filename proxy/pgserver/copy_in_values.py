"""COPY FROM values as PostgreSQL writes them, in the text DuckDB's CSV reader takes.

The spool (copy.py) hands every row to DuckDB's CSV reader, which reads most of
PostgreSQL's text forms as they are. Where the two differ, the value is rewritten here:

- bytea: PostgreSQL's `\\x00ff` (hex) or escape form (`\\\\`, `\\ooo`) -> DuckDB's `\\x00\\xFF`;
- one-dimensional arrays: `{1,2,NULL}`, `{"a b",c}` -> DuckDB's `[1, 2, NULL]` list text;
- binary COPY: the decoded values (bytes, lists, intervals as timedelta) in those forms,
  and jsonb's version byte dropped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from transpiler.any_array import parse_array_literal

_OCTAL = re.compile(r"\\([0-7]{3})|\\\\")


def text_converter(duckdb_type: str) -> Callable[[str], str] | None:
    """How to rewrite a PostgreSQL text value of a column of this DuckDB type; None when
    DuckDB reads PostgreSQL's form as it is."""
    t = duckdb_type.upper()
    if t == "BLOB":
        return bytea_text
    if t.endswith("[]") and not t.endswith("[][]"):
        return array_text
    return None


def bytea_text(value: str) -> str:
    if value.startswith("\\x"):
        data = bytes.fromhex(value[2:])
    else:  # bytea_output = escape: \\ is a backslash, \ooo an octal byte
        data = _OCTAL.sub(lambda m: chr(int(m[1], 8)) if m[1] else "\\", value).encode(
            "latin-1", errors="surrogateescape"
        )
    return blob_text(data)


def blob_text(data: bytes) -> str:
    return "".join(f"\\x{b:02X}" for b in data)


def array_text(value: str) -> str:
    items = parse_array_literal(value)
    # Not a one-dimensional PostgreSQL array: left as sent, DuckDB says what it cannot read.
    return value if items is None else list_text(items)


def list_text(items: list[str | None]) -> str:
    return "[" + ", ".join("NULL" if v is None else _quoted(v) for v in items) + "]"


def _quoted(v: str) -> str:
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def binary_value_text(value: object) -> str:
    """A value decoded from binary COPY as text DuckDB casts back to the same value."""
    if isinstance(value, bytes):
        return blob_text(value)
    if isinstance(value, list):
        return list_text([None if v is None else binary_value_text(v) for v in value])
    if isinstance(value, dt.timedelta):
        return f"{value.days} days {value.seconds} seconds {value.microseconds} microseconds"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def binary_json(data: bytes) -> str:
    """A json or jsonb binary value: jsonb's starts with its version byte 1, which no JSON
    text starts with."""
    return (data[1:] if data[:1] == b"\x01" else data).decode()
