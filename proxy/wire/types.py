"""Sans-I/O type layer: DuckDB result types -> Postgres types, value encoders, decoders.

Public interface (imported by the server):
    PgType, ParamDecodeError, pg_type_for, result_encoder, encode_data_rows,
    param_decoder, duckdb_type_for_oid, oid_for_duckdb_type_name, lossless_cast.

A DuckDB type string (``str(cursor.description[i][1])``) is parsed once per column
into a *kind* (a PG scalar type name, or 'duck' for types rendered as DuckDB text)
plus an array depth; encoders are closures specialised for that kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from proxy.wire import bincodec, enum_oids, oidvectors, textcodec, textparse, vector
from proxy.wire import rows as rows_impl
from proxy.wire.char_type import is_pg_char
from proxy.wire.oids import (
    ARRAY_OF,
    BY_NAME,
    BY_OID,
    ELEM_OF_ARRAY,
    TEXT,
    VECTOR,
    VECTOR_OID,
    ParamDecodeError,
    PgType,
    numeric_typmod,
)
from proxy.wire.oidvectors import VECTOR_KIND
from proxy.wire.vector import vector_dims
from transpiler import numeric_type

__all__ = [
    "PgType",
    "ParamDecodeError",
    "pg_type_for",
    "result_encoder",
    "encode_data_rows",
    "param_decoder",
    "duckdb_type_for_oid",
    "oid_for_duckdb_type_name",
    "lossless_cast",
    "column_kind",
    "base_kinds",
]

Encoder = Callable[[object], bytes]
VECTOR_VALUES = frozenset(VECTOR_KIND.values())

# DuckDB base type name (upper case, no parameters) -> PG scalar kind.
_BASE_KIND: dict[str, str] = {
    "BOOLEAN": "bool",
    "BOOL": "bool",
    "LOGICAL": "bool",
    "TINYINT": "int2",
    "INT1": "int2",
    "UTINYINT": "int2",
    "SMALLINT": "int2",
    "INT2": "int2",
    "SHORT": "int2",
    "USMALLINT": "int4",
    "INTEGER": "int4",
    "INT": "int4",
    "INT4": "int4",
    "SIGNED": "int4",
    "UINTEGER": "int8",
    "BIGINT": "int8",
    "INT8": "int8",
    "LONG": "int8",
    "OID": "oid",  # not a DuckDB type: the server presents catalog oid columns with it
    "PG_CHAR": "char",  # not a DuckDB type either: catalog "char" columns, where needed
    "UBIGINT": "numeric",
    "HUGEINT": "numeric",
    "INT128": "numeric",
    "UHUGEINT": "numeric",
    "BIGNUM": "numeric",
    "VARINT": "numeric",
    "FLOAT": "float4",
    "FLOAT4": "float4",
    "REAL": "float4",
    "DOUBLE": "float8",
    "FLOAT8": "float8",
    "DOUBLE PRECISION": "float8",
    "DECIMAL": "numeric",
    "NUMERIC": "numeric",
    "VARCHAR": "text",
    "TEXT": "text",
    "STRING": "text",
    "CHAR": "text",
    "BPCHAR": "text",
    "NVARCHAR": "text",
    "CHARACTER VARYING": "text",
    # Not a DuckDB type: catalog identifier columns PostgreSQL types name (OID 19) are
    # described so (transpiler/name_types.py); their values are VARCHAR.
    "NAME": "name",
    "BLOB": "bytea",
    "BYTEA": "bytea",
    "BINARY": "bytea",
    "VARBINARY": "bytea",
    "DATE": "date",
    "TIME": "time",
    "TIME WITHOUT TIME ZONE": "time",
    "TIME WITH TIME ZONE": "timetz",
    "TIMETZ": "timetz",
    "TIMESTAMP": "timestamp",
    "DATETIME": "timestamp",
    "TIMESTAMP WITHOUT TIME ZONE": "timestamp",
    "TIMESTAMP_S": "timestamp",
    "TIMESTAMP_MS": "timestamp",
    "TIMESTAMP_NS": "timestamp",
    "TIMESTAMP_US": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "TIMESTAMPTZ": "timestamptz",
    "INTERVAL": "interval",
    "UUID": "uuid",
    "JSON": "json",
    # Not a DuckDB type: the server names JSON result columns PostgreSQL types jsonb so
    # (DuckDB has one JSON type; see transpiler/json_types.py).
    "JSONB": "jsonb",
    "NULL": "text",
}
# Everything else (STRUCT, MAP, UNION, ENUM, BIT, unknown) -> 'duck': PG text of DuckDB text.

_PARAMS = re.compile(r"^([A-Z_ ][A-Z0-9_ ]*?)\s*(?:\((.*)\))?$", re.DOTALL)


def split_array(duckdb_type: str) -> tuple[str, int, list[int | None]]:
    """'FLOAT[384]' -> ('FLOAT', 1, [384]); 'INTEGER[][]' -> ('INTEGER', 2, [None, None]).

    Only brackets at nesting depth 0 and outside quotes count (ENUM labels, STRUCT
    fields may contain brackets).
    """
    t = duckdb_type.strip()
    sizes: list[int | None] = []
    while t.endswith("]"):
        depth, quote, start = 0, "", -1
        for i, ch in enumerate(t):
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "[" and depth == 0:
                start = i
        if start <= 0:
            break
        inner = t[start + 1 : -1].strip()
        sizes.insert(0, int(inner) if inner.isdigit() else None)
        t = t[:start].strip()
    return t, len(sizes), sizes


def base_kinds() -> list[tuple[str, str]]:
    """(DuckDB base type name, PG scalar kind) pairs that column_kind maps, sorted by name."""
    return sorted(_BASE_KIND.items())


@lru_cache(maxsize=1024)
def column_kind(duckdb_type: str) -> tuple[str, int, int]:
    """(scalar kind, array depth, numeric typmod or -1) for a DuckDB type string."""
    base, depth, _sizes = split_array(duckdb_type)
    if is_pg_char(base):  # catalog "char" columns (char_type.py)
        return "char", depth, -1
    up = base.upper().strip('"')
    mt = _PARAMS.match(up)
    name, args = (mt[1].strip(), mt[2]) if mt else (up, None)
    kind = _BASE_KIND.get(name, "duck")
    if name == "ENUM" and depth:
        kind = "text"  # an enum array's labels go out as a PG text array, '{a,b}'
    if depth == 1 and name in VECTOR_KIND:
        return VECTOR_KIND[name], 0, -1  # catalog int2vector / oidvector (wire/oidvectors.py)
    typmod = -1
    if kind == "numeric" and name in ("DECIMAL", "NUMERIC") and numeric_type.is_unconstrained(up):
        pass  # PostgreSQL's bare numeric (transpiler/numeric_type.py): typmod -1
    elif kind == "numeric" and name in ("DECIMAL", "NUMERIC"):
        p, s = 18, 3  # DuckDB's default DECIMAL width
        if args:
            nums = [a.strip() for a in args.split(",")]
            try:
                p = int(nums[0])
                s = int(nums[1]) if len(nums) > 1 else 0
            except ValueError:
                pass
        typmod = numeric_typmod(p, s)
    if kind == "text" and args is not None and name in ("VARCHAR", "CHAR", "BPCHAR"):
        kind = "text"  # DuckDB ignores lengths; so do we
    if kind == "duck" and depth:
        depth = 0  # a list of STRUCTs etc. goes out whole as DuckDB text
    return kind, depth, typmod


def pg_type_for(duckdb_type: str) -> PgType:
    """The RowDescription type of a DuckDB result column (a user enum: its own oid, when
    proxy.wire.enum_oids knows it)."""
    if duckdb_type.startswith("ENUM("):
        found = enum_oids.pg_type(duckdb_type)
        if found is not None:
            return found
    return _pg_type_for(duckdb_type)


# timestamp(3) / timestamp(0) columns are DuckDB's TIMESTAMP_MS / TIMESTAMP_S: typmod p
_PRECISION_TYPMODS = {"TIMESTAMP_MS": 3, "TIMESTAMP_S": 0}


@lru_cache(maxsize=1024)
def _pg_type_for(duckdb_type: str) -> PgType:
    """The RowDescription type of a DuckDB result column.

    FLOAT[n] is pgvector's vector(n) (typmod n), as PostgreSQL with pgvector describes it.
    """
    dims = vector_dims(duckdb_type)
    if dims is not None:
        return PgType(VECTOR.oid, VECTOR.name, VECTOR.typlen, dims)
    kind, depth, typmod = column_kind(duckdb_type)
    if kind == "duck":
        return TEXT
    if depth:
        return ARRAY_OF[kind]  # PG arrays carry no per-dimension typmod
    typmod = _PRECISION_TYPMODS.get(duckdb_type, typmod)
    t = BY_NAME[kind]
    return PgType(t.oid, t.name, t.typlen, typmod) if typmod != -1 else t


def lossless_cast(duckdb_type: str) -> str | None:
    """SQL type the engine should cast a result column to before fetching, or None.

    DuckDB's Python conversion loses information for these types:
    INTERVAL (months folded into 30-day blocks), STRUCT/MAP/UNION/... (their
    DuckDB text form needs DuckDB's own quoting), INTERVAL[] likewise.  Casting
    to VARCHAR makes DuckDB produce text that our encoders parse exactly.
    """
    kind, depth, _ = column_kind(duckdb_type)
    if kind == "duck":
        base = duckdb_type.strip().upper()
        return None if base.startswith(("ENUM", "BIT")) else "VARCHAR"
    if kind == "interval":  # INTERVAL[]: each element as its text ('{1 mon}', not 30 days)
        return "VARCHAR" + "[]" * depth
    return None


def result_encoder(
    duckdb_type: str, fmt: int, tz: str | None = None, interval_style: str = "postgres"
) -> Encoder:
    """Encoder of one non-None value of a DuckDB column into PG text (0) / binary (1).

    ``tz`` is the session TimeZone: it only affects TIMESTAMPTZ text (binary is UTC);
    ``interval_style`` the session IntervalStyle: only INTERVAL text.
    FLOAT[n] goes out as pgvector's vector (see pg_type_for).
    """
    enc = _result_encoder(duckdb_type, fmt, tz, interval_style)
    base, depth, _sizes = split_array(duckdb_type)
    if numeric_type.is_unconstrained(base):
        # PostgreSQL's bare numeric (transpiler/numeric_type.py): without padding zeros
        trim = textcodec.trim_nested if depth else textcodec.trim_scale
        return lambda v: enc(trim(v))
    return enc


def _result_encoder(duckdb_type: str, fmt: int, tz: str | None, interval_style: str) -> Encoder:
    if vector_dims(duckdb_type) is not None:
        return vector.vector_send if fmt else vector.vector_out
    kind, depth, typmod = column_kind(duckdb_type)
    if kind in VECTOR_VALUES:
        return oidvectors.text_encoder() if fmt == 0 else oidvectors.binary_encoder(kind)
    if fmt == 0:
        if depth:
            return textcodec.array_text_encoder(kind, tz, interval_style)
        return textcodec.text_encoder(kind, tz, interval_style)
    if kind == "duck":
        return textcodec.text_encoder("duck")  # text and binary of PG text are the same bytes
    if depth:
        return bincodec.array_binary_encoder(kind, depth)
    return bincodec.binary_encoder(kind, typmod)


def encode_data_rows(rows: list[tuple], encoders: list[Encoder]) -> bytes:
    return rows_impl.encode_data_rows(rows, encoders)


def oid_for_duckdb_type_name(name: str) -> int:
    """PG OID for a DuckDB type name (ParameterDescription of inferred parameter types).
    An enum parameter is described as text (text[]): drivers then send labels the server
    decodes, where an enum oid would get asyncpg's binary array of an unknown oid."""
    return _pg_type_for(name).oid


_DUCK_FOR_KIND: dict[str, str | None] = {
    "bool": "BOOLEAN",
    "int2": "SMALLINT",
    "int4": "INTEGER",
    "int8": "BIGINT",
    "float4": "FLOAT",
    "float8": "DOUBLE",
    "numeric": None,
    "text": "VARCHAR",
    "varchar": "VARCHAR",
    "bpchar": "VARCHAR",
    "name": "VARCHAR",
    "bytea": "BLOB",
    "date": "DATE",
    "time": "TIME",
    "timetz": "TIME WITH TIME ZONE",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMP WITH TIME ZONE",
    "interval": "INTERVAL",
    "uuid": "UUID",
    "json": "JSON",
    "jsonb": "JSON",
    "oid": "UINTEGER",
    "unknown": None,
}


def duckdb_type_for_oid(oid: int) -> str | None:
    """DuckDB type to CAST a parameter of this PG type to; None = no cast needed/possible.

    numeric gives None: a Python Decimal binds as DECIMAL(p,s) of its own digits, and
    any fixed DuckDB DECIMAL width would truncate.
    """
    if oid in ELEM_OF_ARRAY:
        elem = _DUCK_FOR_KIND.get(ELEM_OF_ARRAY[oid])
        return elem + "[]" if elem else None
    t = BY_OID.get(oid)
    return _DUCK_FOR_KIND.get(t.name) if t else None


def param_decoder(oid: int, fmt: int, tz: str | None = None) -> Callable[[bytes], object]:
    """Decoder of one Bind parameter value (never None: NULL is handled by the caller)."""
    if fmt == 0:
        return textparse.text_decoder(oid, tz)
    if oid == VECTOR_OID:
        return vector.vector_recv
    return bincodec.binary_decoder(oid)
