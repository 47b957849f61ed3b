"""Postgres type identities (OIDs, lengths) and the error type for bad parameters.

Kept apart from the codecs so that both codec modules and ``types`` can import it
without cycles.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PgType:
    """What RowDescription needs for one column."""

    oid: int
    name: str
    typlen: int
    typmod: int = -1


class ParamDecodeError(ValueError):
    """A Bind parameter that cannot be decoded; ``sqlstate`` goes into the ErrorResponse.

    22P02 invalid text representation, 22003 out of range, 22021 bad UTF-8,
    22P03 bad binary representation, 08P01 binary value shorter than its type needs,
    42804 array element type mismatch.
    """

    def __init__(self, message: str, sqlstate: str = "22P02") -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def shorten(value: object, limit: int = 60) -> str:
    """Offending values are quoted in messages, but never at unbounded length."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(value)
        s = b[:limit].hex()
        return s + ("..." if len(b) > limit else "")
    s = str(value)
    return s if len(s) <= limit else s[:limit] + "..."


# Scalar types: name -> (oid, typlen, array oid).  typlen -1 is varlena.
SCALARS: dict[str, tuple[int, int, int]] = {
    "bool": (16, 1, 1000),
    "bytea": (17, -1, 1001),
    "int8": (20, 8, 1016),
    "int2": (21, 2, 1005),
    "int4": (23, 4, 1007),
    "text": (25, -1, 1009),
    "json": (114, -1, 199),
    "float4": (700, 4, 1021),
    "float8": (701, 8, 1022),
    "unknown": (705, -2, 0),
    "varchar": (1043, -1, 1015),
    "bpchar": (1042, -1, 1014),
    "name": (19, 64, 1003),
    "date": (1082, 4, 1182),
    "time": (1083, 8, 1183),
    "timestamp": (1114, 8, 1115),
    "timestamptz": (1184, 8, 1185),
    "interval": (1186, 16, 1187),
    "timetz": (1266, 12, 1270),
    "numeric": (1700, -1, 1231),
    "uuid": (2950, 16, 2951),
    "jsonb": (3802, -1, 3807),
    "oid": (26, 4, 1028),
    "char": (18, 1, 1002),  # PostgreSQL's one-byte "char" (pg_type.typtype); asyncpg reads bytes
}

BY_NAME: dict[str, PgType] = {n: PgType(o, n, ln) for n, (o, ln, _a) in SCALARS.items()}
BY_OID: dict[int, PgType] = {t.oid: t for t in BY_NAME.values()}
ARRAY_OF: dict[str, PgType] = {n: PgType(a, "_" + n, -1) for n, (_o, _l, a) in SCALARS.items() if a}
# array oid -> element type name
ELEM_OF_ARRAY: dict[int, str] = {t.oid: n for n, t in ARRAY_OF.items()}
for _t in ARRAY_OF.values():
    BY_OID[_t.oid] = _t

# Catalog vectors (pg_index.indkey, pg_proc.proargtypes; wire/oidvectors.py): result columns
# only, never parameters, so they have no decoders (not in BY_OID).
BY_NAME["int2vector"] = PgType(22, "int2vector", -1)
BY_NAME["oidvector"] = PgType(30, "oidvector", -1)

TEXT = BY_NAME["text"]


def numeric_typmod(precision: int, scale: int) -> int:
    return ((precision << 16) | scale) + 4


# pgvector's vector (pg_type row in proxy/db/catalog/10_types.sql): DuckDB FLOAT[n]
# results travel as it, as they would from PostgreSQL with pgvector.
VECTOR_OID = 16400
VECTOR_ARRAY_OID = 16405
VECTOR = PgType(VECTOR_OID, "vector", -1)
