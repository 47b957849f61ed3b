"""One Arrow column -> the PostgreSQL text or binary form of each of its cells, vectorised.

`cells(column, plan)` returns a binary Arrow array (NULL where the value is NULL) holding
exactly the bytes the per-value encoders of `textcodec` / `bincodec` produce, computed a
column at a time with pyarrow.compute and numpy. Only the kinds `plan_for` accepts take
this path; values a vectorised form cannot render exactly (dates outside years 1..9999,
infinities) fall back to the per-value formatters of `temporal` for that column.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from proxy.core.pg_json import output_text
from proxy.wire import temporal as T
from proxy.wire.arrow_numeric import (
    numeric_binary,
    numeric_binary_rows,
    numeric_rows,
    numeric_text,
)
from proxy.wire.types import column_kind
from proxy.wire.vector import vector_dims

UNIX_TO_PG_US = T.UNIX_TO_PG_DAYS * T.US_PER_DAY
DATE_MIN, DATE_MAX = -719162, 2932896  # 0001-01-01, 9999-12-31 as days since 1970
TS_MIN, TS_MAX = DATE_MIN * T.US_PER_DAY, (DATE_MAX + 1) * T.US_PER_DAY - 1
DUCK_INF32, DUCK_INF64 = 2**31 - 1, 2**63 - 1  # DuckDB's infinity (-x is -infinity)

TEXT_KINDS = frozenset({"int2", "int4", "int8", "bool", "text", "name", "json", "jsonb"})
TEXT_KINDS |= {"numeric"}
TEXT_KINDS |= {"date", "timestamp", "timestamptz"}
BINARY_KINDS = TEXT_KINDS | {"float4", "float8"}
STRING_KINDS = frozenset({"text", "name", "json", "jsonb"})  # cells that may hold any character
_NUMPY_INT = {"int2": ">i2", "int4": ">i4", "int8": ">i8", "float4": ">f4", "float8": ">f8"}


@dataclass(frozen=True, slots=True)
class Plan:
    kind: str
    fmt: int  # 0 text, 1 binary
    scale: int  # DECIMAL scale (numeric only)
    utc: bool  # the session TimeZone is UTC (timestamptz text)


def plan_for(duckdb_type: str, fmt: int, tz: str | None) -> Plan | None:
    """How a column is encoded a column at a time, or None: it needs the per-value path."""
    if vector_dims(duckdb_type) is not None:
        return None
    kind, depth, typmod = column_kind(duckdb_type)
    if depth or kind not in (BINARY_KINDS if fmt else TEXT_KINDS):
        return None
    scale = 0
    if kind == "numeric":
        if typmod < 4:
            return None  # HUGEINT, BIGNUM, UBIGINT: not a DECIMAL
        precision, scale = (typmod - 4) >> 16, (typmod - 4) & 0xFFFF
        # text: the unscaled int64 (precision <= 18), else Arrow's cast, fixed notation up
        # to scale 6; binary: the scaled digits fit an int64 once padded to whole groups.
        if (fmt == 0 and scale > 6 and precision > 18) or (
            fmt == 1 and precision + (-scale % 4) > 18
        ):
            return None
    utc = T.resolve_zone(tz) is T.UTC
    if kind == "timestamptz" and fmt == 0 and not utc:
        return None
    return Plan(kind, fmt, scale, utc)


def _ints(col: pa.Array, width: str) -> np.ndarray:
    """The raw integers of a fixed-width column (NULL slots hold anything), read-only
    over Arrow's buffer: every caller derives a new array from them."""
    return np.frombuffer(col.buffers()[1], dtype=width)[col.offset : col.offset + len(col)]


def fixed_cells(items: np.ndarray, validity: pa.Array | None) -> pa.Array:
    """Equal-width byte strings (a numpy array of big-endian numbers or a structured row)
    as a binary array, NULL where `validity` is false."""
    n = len(items)
    width = items.dtype.itemsize
    # py_buffer wraps the arrays without a copy (and keeps them alive)
    data = pa.py_buffer(np.ascontiguousarray(items).view(np.uint8))
    offsets = pa.py_buffer(np.arange(0, (n + 1) * width, width, dtype=np.int32))
    out = pa.Array.from_buffers(pa.binary(), n, [None, offsets, data])
    if validity is not None and validity.null_count:
        out = pc.if_else(validity.is_valid(), out, pa.scalar(None, pa.binary()))
    return out


def _per_value(col: pa.Array, raw: np.ndarray, fmt_one: object) -> pa.Array:
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    vals = [fmt_one(int(r)).encode() if ok else None for r, ok in zip(raw, valid, strict=True)]  # type: ignore[operator]
    return pa.array(vals, pa.binary())


def _pg_days(raw: np.ndarray) -> np.ndarray:
    # int32 (-infinity wraps, and is replaced below): an int64 array of a batch is a
    # mapping of its own (glibc's mmap threshold), faulted in and unmapped each time
    days = raw - np.int32(T.UNIX_TO_PG_DAYS)
    days[raw == DUCK_INF32] = T.DATE_NOEND
    days[raw == -DUCK_INF32] = T.DATE_NOBEGIN
    return days


def _pg_us(raw: np.ndarray) -> np.ndarray:
    us = raw - UNIX_TO_PG_US
    us[raw == DUCK_INF64] = T.TS_NOEND
    us[raw == -DUCK_INF64] = T.TS_NOBEGIN
    return us


def _numeric_text(col: pa.Array) -> pa.Array:
    """'-12.50' from unscaled -1250 and scale 2: numpy digits (`numeric_text`) up to 18
    digits, at half the cost of Arrow's decimal cast; wider DECIMALs by the cast, which
    writes PostgreSQL's form while it keeps to fixed notation (scale <= 6, `plan_for`)."""
    if col.type.precision <= 18:  # type: ignore[attr-defined]
        return numeric_text(col, col.type.scale)  # type: ignore[attr-defined]
    return pc.cast(pc.cast(col, pa.string()), pa.binary())


_FRACTION_ZEROS = r"\.?0+$"

# 'YYYY-MM-DD' of every day from 1900 to 2099 (730 KB, made once by Arrow's own cast): a
# date column in that range is a `take` of its 10-byte items (a fifth of the cost of a
# gather of (n, 10) byte rows, which cost a third of the cast).
_DATES_FIRST, _DATES_SPAN = -25567, 73049  # 1900-01-01, days to 2100-01-01


@functools.cache
def _date_texts() -> np.ndarray:
    days = pa.array(np.arange(_DATES_FIRST, _DATES_FIRST + _DATES_SPAN, dtype=np.int32))
    text = pc.cast(days.cast(pa.date32()), pa.string())
    return np.frombuffer(text.buffers()[2], dtype="S10")


def _table_dates(col: pa.Array, raw: np.ndarray) -> np.ndarray:
    """'YYYY-MM-DD' bytes (S10) of days within the table's years (NULL slots: any date)."""
    days = raw - np.int32(_DATES_FIRST)
    if col.null_count:  # a NULL slot may hold any number
        days = np.where(col.is_valid().to_numpy(zero_copy_only=False), days, 0)
    return np.take(_date_texts(), days)  # items of 10 bytes: a fifth of a row gather's cost


def date_text_values(col: pa.Array) -> np.ndarray | None:
    """The text of a date column without NULLs within the table's years as S10 values
    (a FIXED field of a COPY row, without a binary array in between), else None."""
    if col.null_count or not pa.types.is_date32(col.type) or not len(col):
        return None
    raw = _ints(col, "<i4")
    if raw.min() < _DATES_FIRST or raw.max() >= _DATES_FIRST + _DATES_SPAN:
        return None
    return _table_dates(col, raw)


def _text_temporal(col: pa.Array, plan: Plan) -> pa.Array:
    if plan.kind == "date":
        raw = _ints(col, "<i4")
        valid = raw[col.is_valid().to_numpy(zero_copy_only=False)] if col.null_count else raw
        if not valid.size:
            return pc.cast(pc.cast(col, pa.string()), pa.binary())
        low, high = valid.min(), valid.max()
        if low < DATE_MIN or high > DATE_MAX:
            return _per_value(col, _pg_days(raw), T.format_pg_date)
        if low >= _DATES_FIRST and high < _DATES_FIRST + _DATES_SPAN:
            return fixed_cells(_table_dates(col, raw), col)
        return pc.cast(pc.cast(col, pa.string()), pa.binary())
    if col.type.unit != "us":  # type: ignore[attr-defined]
        col = pc.cast(col, pa.timestamp("us", col.type.tz))  # type: ignore[attr-defined]
    raw = _ints(col, "<i8")
    valid = raw[col.is_valid().to_numpy(zero_copy_only=False)]
    tz = plan.kind == "timestamptz"
    if valid.size and (valid.min() < TS_MIN or valid.max() > TS_MAX):
        fmt_one = (lambda us: T.format_pg_timestamp(us, 0)) if tz else T.format_pg_timestamp
        return _per_value(col, _pg_us(raw), fmt_one)
    naive = pa.Array.from_buffers(pa.timestamp("us"), len(col), col.buffers(), offset=col.offset)
    text = pc.replace_substring_regex(pc.cast(naive, pa.string()), _FRACTION_ZEROS, "")
    if tz:
        text = pc.binary_join_element_wise(text, "+00", "")
    return pc.cast(text, pa.binary())


def cells(col: pa.Array, plan: Plan) -> pa.Array:
    """The column's cells as PostgreSQL sends them (binary array, NULL for NULL)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    kind = plan.kind
    if pa.types.is_null(col.type):
        return pa.nulls(len(col), pa.binary())
    if kind == "jsonb":
        text = _jsonb_cells(col)
        return text if plan.fmt == 0 else pc.binary_join_element_wise(b"\x01", text, b"")
    if plan.fmt == 0:
        if kind in STRING_KINDS:
            return pc.cast(col, pa.binary())
        if kind == "bool":
            return pc.if_else(col, b"t", b"f")
        if kind == "numeric" and pa.types.is_decimal(col.type):
            return _numeric_text(col)
        if kind in ("int2", "int4", "int8", "numeric"):
            return pc.cast(pc.cast(col, pa.string()), pa.binary())
        return _text_temporal(col, plan)
    if kind in ("text", "name", "json"):
        return pc.cast(col, pa.binary())
    if kind == "bool":
        return pc.if_else(col, b"\x01", b"\x00")
    if kind in _NUMPY_INT:
        target = {"int2": pa.int16(), "int4": pa.int32(), "int8": pa.int64()}.get(kind)
        if target is not None and col.type != target:
            col = pc.cast(col, target)
        elif kind == "float4" and col.type != pa.float32():
            col = pc.cast(col, pa.float32())
        elif kind == "float8" and col.type != pa.float64():
            col = pc.cast(col, pa.float64())
        little = _NUMPY_INT[kind].replace(">", "<")
        return fixed_cells(_ints(col, little).astype(_NUMPY_INT[kind]), col)
    if kind == "numeric":
        return numeric_binary(col, plan.scale)
    if kind == "date":
        return fixed_cells(_pg_days(_ints(col, "<i4")).astype(">i4"), col)
    if col.type.unit != "us":  # type: ignore[attr-defined]
        col = pc.cast(col, pa.timestamp("us", col.type.tz))  # type: ignore[attr-defined]
    return fixed_cells(_pg_us(_ints(col, "<i8")).astype(">i8"), col)


def _jsonb_cells(col: pa.Array) -> pa.Array:
    """jsonb's text form of each value (proxy.core.pg_json.output_text).

    Normalised here, on output, rather than stored normalised on write: DuckDB keeps a
    JSON value's text as written, and that text comes from every writer (SQL INSERT /
    COPY, REST, MCP, the agent layer, other proxies of a lake, data older than this
    rule) and from DuckDB's JSON functions (compact `{"a":1}`), so only the output
    sees them all. The cost (bench/jsonb_text.py, 100k rows of a ~95-byte document,
    load 8-16): server CPU 0.03-0.05 -> 0.66-0.86 s per fetch, +6.2-8.1 us a row, text,
    binary and COPY alike (json.loads with a key-ordering hook ~5 us, encoding ~2 us). Storing normalised would make plain column reads free again, but only with
    every writer normalising and with the Arrow plan knowing which result columns are
    plain column references (it is chosen before column_origins resolves them)."""
    values = col.to_numpy(zero_copy_only=False)
    return pa.array([None if v is None else output_text(v).encode() for v in values], pa.binary())


def fixed_values(col: pa.Array, plan: Plan) -> tuple[np.ndarray, str] | None:
    """The binary cells of a fixed-width column without NULLs as numbers and the dtype
    they go out as (big-endian: a structured row's field swaps them as it is assigned,
    with no array of its own), else None."""
    if plan.fmt != 1 or col.null_count or pa.types.is_null(col.type):
        return None
    kind = plan.kind
    if kind == "bool":
        return col.to_numpy(zero_copy_only=False), "u1"
    if kind in _NUMPY_INT:
        target = {"int2": pa.int16(), "int4": pa.int32(), "int8": pa.int64()}.get(kind)
        target = target or (pa.float32() if kind == "float4" else pa.float64())
        if col.type != target:
            col = pc.cast(col, target)
        return _ints(col, _NUMPY_INT[kind].replace(">", "<")), _NUMPY_INT[kind]
    if kind == "date":
        return _pg_days(_ints(col, "<i4")), ">i4"
    if kind in ("timestamp", "timestamptz"):
        if col.type.unit != "us":  # type: ignore[attr-defined]
            col = pc.cast(col, pa.timestamp("us", col.type.tz))  # type: ignore[attr-defined]
        return _pg_us(_ints(col, "<i8")), ">i8"
    return None


def padded_cells(col: pa.Array, plan: Plan) -> tuple[np.ndarray, np.ndarray] | None:
    """Cells right-aligned after space filler in (n, width) byte rows, and their lengths,
    where a kind is made that way (DECIMAL binary, each cell after its length word;
    DECIMAL(p <= 18) text without NULLs), else None. A row of these and the
    fixed-width cells after it becomes one piece, the filler trimmed once."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if plan.kind != "numeric" or not pa.types.is_decimal(col.type):
        return None
    if plan.fmt == 1:
        return numeric_binary_rows(col, plan.scale, word=True)
    if col.null_count or col.type.precision > 18:  # type: ignore[attr-defined]
        return None
    return numeric_rows(col, col.type.scale)  # type: ignore[attr-defined]
