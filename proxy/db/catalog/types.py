"""pg_type rows, generated from the wire layer's OID table so the two cannot disagree.

RowDescription (proxy.wire.types) and pg_type / format_type (this package) must name
the same OIDs: asyncpg and pgJDBC look result-column OIDs up in pg_type.
"""

from __future__ import annotations

from dataclasses import dataclass

from proxy.wire import oids as wire_oids
from proxy.wire import types as wire_types


@dataclass(frozen=True)
class TypeInfo:
    """Per-type facts pg_type needs beyond (oid, typlen, array oid)."""

    category: str  # typcategory
    byval: bool
    align: str  # typalign: c, s, i, d
    io: str  # stem of the I/O function names (int4 -> int4in, int4out, ...)
    collation: int = 0  # 100 = "default" for collatable string types
    preferred: bool = False


# Types the wire layer does not send but clients name in catalog queries
# (reg* casts, int2vector/oidvector columns, ranges asyncpg may introspect).
EXTRA_SCALARS: dict[str, tuple[int, int, int]] = {
    "char": (18, 1, 1002),
    "int2vector": (22, -1, 1006),
    "regproc": (24, 4, 1008),
    "tid": (27, 6, 1010),
    "xid": (28, 4, 1011),
    "cid": (29, 4, 1012),
    "oidvector": (30, -1, 1013),
    "xml": (142, -1, 143),
    "point": (600, 16, 1017),
    "cidr": (650, -1, 651),
    "money": (790, 8, 791),
    "macaddr": (829, 6, 1040),
    "inet": (869, -1, 1041),
    "bit": (1560, -1, 1561),
    "varbit": (1562, -1, 1563),
    "regclass": (2205, 4, 2210),
    "regtype": (2206, 4, 2211),
    "regnamespace": (4089, 4, 4090),
    "regrole": (4096, 4, 4097),
    "int4range": (3904, -1, 3905),
    "numrange": (3906, -1, 3907),
    "tsrange": (3908, -1, 3909),
    "tstzrange": (3910, -1, 3911),
    "daterange": (3912, -1, 3913),
    "int8range": (3926, -1, 3927),
}
PSEUDO: dict[str, tuple[int, int]] = {  # pseudo-types: typtype 'p', no array
    "record": (2249, -1),
    "cstring": (2275, -2),
    "anyarray": (2277, -1),
    "void": (2278, 4),
    "trigger": (2279, 4),
    "anyelement": (2283, 4),
}
# range type -> (subtype oid, multirange oid)
RANGES: dict[str, tuple[int, int]] = {
    "int4range": (23, 4451),
    "numrange": (1700, 4532),
    "tsrange": (1114, 4533),
    "tstzrange": (1184, 4534),
    "daterange": (1082, 4535),
    "int8range": (20, 4536),
}

_INFO: dict[str, TypeInfo] = {
    "bool": TypeInfo("B", True, "c", "bool", preferred=True),
    "bytea": TypeInfo("U", False, "i", "bytea"),
    "char": TypeInfo("Z", True, "c", "char"),
    "name": TypeInfo("S", False, "c", "name", collation=950),
    "int8": TypeInfo("N", True, "d", "int8"),
    "int2": TypeInfo("N", True, "s", "int2"),
    "int2vector": TypeInfo("A", False, "i", "int2vector"),
    "int4": TypeInfo("N", True, "i", "int4"),
    "regproc": TypeInfo("N", True, "i", "regproc"),
    "text": TypeInfo("S", False, "i", "text", collation=100, preferred=True),
    "oid": TypeInfo("N", True, "i", "oid", preferred=True),
    "tid": TypeInfo("U", False, "s", "tid"),
    "xid": TypeInfo("U", True, "i", "xid"),
    "cid": TypeInfo("U", True, "i", "cid"),
    "oidvector": TypeInfo("A", False, "i", "oidvector"),
    "json": TypeInfo("U", False, "i", "json"),
    "xml": TypeInfo("U", False, "i", "xml"),
    "point": TypeInfo("G", False, "d", "point"),
    "float4": TypeInfo("N", True, "i", "float4"),
    "float8": TypeInfo("N", True, "d", "float8", preferred=True),
    "unknown": TypeInfo("X", False, "c", "unknown"),
    "cidr": TypeInfo("I", False, "i", "cidr"),
    "money": TypeInfo("N", True, "d", "cash"),
    "macaddr": TypeInfo("U", False, "i", "macaddr"),
    "inet": TypeInfo("I", False, "i", "inet", preferred=True),
    "bpchar": TypeInfo("S", False, "i", "bpchar", collation=100),
    "varchar": TypeInfo("S", False, "i", "varchar", collation=100),
    "date": TypeInfo("D", True, "i", "date_"),
    "time": TypeInfo("D", True, "d", "time_"),
    "timestamp": TypeInfo("D", True, "d", "timestamp_"),
    "timestamptz": TypeInfo("D", True, "d", "timestamptz_", preferred=True),
    "interval": TypeInfo("T", False, "d", "interval_", preferred=True),
    "timetz": TypeInfo("D", False, "d", "timetz_"),
    "bit": TypeInfo("V", False, "i", "bit_"),
    "varbit": TypeInfo("V", False, "i", "varbit_", preferred=True),
    "numeric": TypeInfo("N", False, "i", "numeric_"),
    "regclass": TypeInfo("N", True, "i", "regclass"),
    "regtype": TypeInfo("N", True, "i", "regtype"),
    "regnamespace": TypeInfo("N", True, "i", "regnamespace"),
    "regrole": TypeInfo("N", True, "i", "regrole"),
    "uuid": TypeInfo("U", False, "c", "uuid_"),
    "jsonb": TypeInfo("U", False, "i", "jsonb_"),
}
_RANGE_INFO = TypeInfo("R", False, "i", "range_")


def _io(stem: str, suffix: str) -> str:
    # date_in, numeric_in ... keep Postgres' real names where they have an underscore.
    return f"{stem}{suffix}" if stem.endswith("_") else f"{stem}{suffix}"


def _sql_str(s: str | None) -> str:
    return "NULL" if s is None else "'" + s.replace("'", "''") + "'"


# PostgreSQL keeps these variable-length types inline ("main"), the rest out of line.
_MAIN_STORAGE = frozenset({"numeric", "inet", "cidr"})


def _storage(name: str, typlen: int) -> str:
    """typstorage as PostgreSQL's: p(lain) fixed-size, m(ain) or x (extended) variable."""
    if typlen > 0:
        return "p"
    return "m" if name in _MAIN_STORAGE else "x"


def pg_type_rows() -> list[str]:
    """VALUES rows: (oid, typname, typlen, typbyval, typtype, typcategory,
    typispreferred, typdelim, typelem, typarray, typinput, typoutput, typreceive,
    typsend, typalign, typstorage, typcollation)."""
    rows: list[str] = []
    scalars = {**wire_oids.SCALARS, **EXTRA_SCALARS}
    for name, (oid, typlen, array_oid) in sorted(scalars.items(), key=lambda kv: kv[1][0]):
        info = _INFO.get(name) or (
            _RANGE_INFO if name in RANGES else TypeInfo("U", False, "i", name)
        )
        typtype = "r" if name in RANGES else ("p" if name == "unknown" else "b")
        elem = {"int2vector": 21, "oidvector": 26}.get(name, 0)
        rows.append(
            _row(
                oid,
                name,
                typlen,
                info.byval,
                typtype,
                info.category,
                info.preferred,
                elem,
                array_oid,
                info.io,
                info.align,
                _storage(name, typlen),
                info.collation,
            )
        )
        if array_oid:
            rows.append(
                _row(
                    array_oid,
                    "_" + name,
                    -1,
                    False,
                    "b",
                    "A",
                    False,
                    oid,
                    0,
                    "array_",
                    "d" if info.align == "d" else "i",
                    "x",
                    info.collation,
                )
            )
    for name, (oid, typlen) in PSEUDO.items():
        rows.append(_row(oid, name, typlen, False, "p", "P", False, 0, 0, name + "_", "i", "p", 0))
    return rows


def _row(
    oid: int,
    name: str,
    typlen: int,
    byval: bool,
    typtype: str,
    category: str,
    preferred: bool,
    elem: int,
    array: int,
    io: str,
    align: str,
    storage: str,
    collation: int,
) -> str:
    stem = io.rstrip("_")
    sep = "_" if io.endswith("_") else ""
    return (
        "("
        + ", ".join(
            [
                str(oid),
                _sql_str(name),
                str(typlen),
                str(byval).upper(),
                _sql_str(typtype),
                _sql_str(category),
                str(preferred).upper(),
                "','",
                str(elem),
                str(array),
                _sql_str(f"{stem}{sep}in"),
                _sql_str(f"{stem}{sep}out"),
                _sql_str(f"{stem}{sep}recv"),
                _sql_str(f"{stem}{sep}send"),
                _sql_str(align),
                _sql_str(storage),
                str(collation),
            ]
        )
        + ")"
    )


def duck_kind_rows() -> list[str]:
    """VALUES rows (DuckDB base type name, PG scalar kind) as the wire layer maps them."""
    return [f"({_sql_str(k)}, {_sql_str(v)})" for k, v in wire_types.base_kinds()]
