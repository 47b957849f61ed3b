"""int2vector and oidvector: the catalog's vector types (pg_index.indkey, pg_proc.proargtypes).

DuckDB has no such types; the catalog keeps them as unsigned lists (USMALLINT[] for
int2vector, UINTEGER[] for oidvector, types nothing else in the catalog uses), so they
still unnest, index and compare as lists, and are sent as PostgreSQL sends them: text
is the values separated by spaces ('1 3'), which pg_dump and pgJDBC split; binary is a
one-dimensional array with lower bound 0, as int2vectorsend / oidvectorsend write it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

# DuckDB list element type -> the vector type it stands for.
VECTOR_KIND: dict[str, str] = {"USMALLINT": "int2vector", "UINTEGER": "oidvector"}
_ELEM = {"int2vector": (21, struct.Struct(">ih")), "oidvector": (26, struct.Struct(">iI"))}
_HEADER = struct.Struct(">iiIii")  # ndim, has-null flag, element oid, length, lower bound


def text_encoder() -> Callable[[object], bytes]:
    return lambda v: " ".join(str(x) for x in v).encode()  # type: ignore[attr-defined]


def binary_encoder(kind: str) -> Callable[[object], bytes]:
    elem_oid, item = _ELEM[kind]
    size = item.size - 4

    def encode(v: object) -> bytes:
        values = list(v)  # type: ignore[call-overload]
        if not values:
            return struct.pack(">iiI", 0, 0, elem_oid)
        head = _HEADER.pack(1, 0, elem_oid, len(values), 0)
        return head + b"".join(item.pack(size, x) for x in values)

    return encode
