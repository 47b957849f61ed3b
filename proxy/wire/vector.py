"""pgvector's `vector` on the wire: text '[1,0.5,-2]' and vector_send's binary layout.

DuckDB FLOAT[n] (fixed-size array of float4) columns are what `vector(n)` creates, so
their values go out as PostgreSQL with pgvector sends them (vector_out, vector_send);
variable-length FLOAT[] lists stay float4[].
Binary: int16 dim, int16 unused (0), then dim float4, all big-endian.
"""

from __future__ import annotations

import struct

import numpy as np

from proxy.wire.oids import ParamDecodeError, shorten
from proxy.wire.textcodec import fmt_float4

_HDR = struct.Struct(">hh")
_STRUCTS: dict[int, struct.Struct] = {}
_NAN = float("nan")


def _body(n: int) -> struct.Struct:
    st = _STRUCTS.get(n)
    if st is None:
        st = _STRUCTS.setdefault(n, struct.Struct(f">hh{n}f"))
    return st


def vector_dims(duckdb_type: str) -> int | None:
    """n of a DuckDB 'FLOAT[n]' type string (pgvector's vector(n)), else None."""
    t = duckdb_type.strip()
    if not t.endswith("]"):
        return None
    base, _, rest = t.partition("[")
    size = rest[:-1]
    if base.strip().upper() not in ("FLOAT", "FLOAT4", "REAL") or not size.isdigit():
        return None
    return int(size)


def _floats(v: object) -> list:
    # a NULL element has no pgvector form (vector_in refuses it too): NaN keeps the
    # row readable instead of failing the whole result
    vals = list(v)  # type: ignore[call-overload]
    if None in vals:
        vals = [_NAN if x is None else x for x in vals]
    return vals


_FMTS: dict[tuple[int, int], str] = {}


def _formatted(vals: list, digits: int) -> np.ndarray:
    n = len(vals)
    fmt = _FMTS.get((n, digits))
    if fmt is None:
        fmt = _FMTS.setdefault((n, digits), ",".join([f"%.{digits}g"] * n))
    return np.asarray((fmt % tuple(vals)).split(","), dtype=object)


def vector_out(v: object) -> bytes:
    """'[1,0.5,-2]': each element as float4's shortest round-trip text, as vector_out.

    Vectorised: the shortest of '%.6g' .. '%.9g' that reads back as the same float4 is
    float4's shortest form, in PostgreSQL's layout except for numbers >= 1e6 printed
    with more than 6 digits (PostgreSQL switches to 1.234567e+06 there); those, and
    subnormals and non-finite values, take fmt_float4 one by one.
    """
    vals = _floats(v)
    if not vals:
        return b"[]"
    f32 = np.asarray(vals, dtype=np.float32)
    out = None
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.zeros(len(vals), dtype=bool)
        for digits in (9, 8, 7, 6):
            text = _formatted(vals, digits)
            same = np.asarray(text, dtype=np.float64).astype(np.float32) == f32
            out = text if out is None else np.where(same, text, out)
            ok |= same
        long = ~same  # more than 6 digits
        big = np.abs(f32) >= 1e6
        normal = np.isfinite(f32) & ((np.abs(f32) >= 1.2e-38) | (f32 == 0))
    for i in np.flatnonzero(~ok | ~normal | (big & long)):
        out[i] = fmt_float4(float(f32[i]))
    return ("[" + ",".join(out.tolist()) + "]").encode()


def vector_send(v: object) -> bytes:
    vals = _floats(v)
    n = len(vals)
    return _body(n).pack(n, 0, *vals)


def vector_recv(b: bytes) -> str:
    """A binary vector parameter as its text form, which DuckDB casts to FLOAT[n] the
    same way as a text-format parameter (so both formats bind alike)."""
    if len(b) < 4:
        raise ParamDecodeError(
            f"insufficient data left in message: binary vector needs 4 bytes, got {len(b)}",
            "08P01",
        )
    dim, unused = _HDR.unpack_from(b)
    if dim < 1 or unused != 0 or len(b) != 4 + 4 * dim:
        raise ParamDecodeError(
            f"incorrect binary data format for type vector ({shorten(b)})", "22P03"
        )
    vals = _body(dim).unpack(b)[2:]
    for x in vals:
        if x != x:
            raise ParamDecodeError("NaN not allowed in vector", "22000")
        if x in (float("inf"), float("-inf")):
            raise ParamDecodeError("infinite value not allowed in vector", "22000")
    return "[" + ",".join(map(repr, vals)) + "]"
