"""Postgres binary format (format code 1): result encoders and Bind parameter decoders.

Layouts follow PG's *send/*recv functions: big-endian integers, IEEE floats,
numeric as base-10000 digits with weight/sign/dscale, date as int32 days and
timestamps as int64 microseconds since 2000-01-01, interval as int64 us + int32
days + int32 months, arrays with an ndim/flags/elemtype/dims/lbound header.
"""

from __future__ import annotations

import datetime as dt
import struct
import uuid
from collections.abc import Callable
from decimal import Context, Decimal

from proxy.core.pg_json import output_text
from proxy.wire import temporal as T
from proxy.wire.errors import invalid_utf8
from proxy.wire.oids import BY_NAME, BY_OID, ELEM_OF_ARRAY, ParamDecodeError, shorten

Encoder = Callable[[object], bytes]
Decoder = Callable[[bytes], object]

_H = struct.Struct(">h")
_I = struct.Struct(">i")
_Q = struct.Struct(">q")
_F = struct.Struct(">f")
_D = struct.Struct(">d")
_QI = struct.Struct(">qi")
_QII = struct.Struct(">qii")
_NUMHDR = struct.Struct(">hhHH")
_ARRHDR = struct.Struct(">iiI")
_II = struct.Struct(">ii")

_BIG = Context(prec=200_000, Emax=999_999, Emin=-999_999)  # numeric limits fit
NUMERIC_POS, NUMERIC_NEG, NUMERIC_NAN = 0x0000, 0x4000, 0xC000
NUMERIC_PINF, NUMERIC_NINF = 0xD000, 0xF000


# ---------------------------------------------------------------- encoders


def numeric_send(v: object, dscale: int | None = None) -> bytes:
    """int / Decimal / numeric text -> PG numeric binary."""
    if isinstance(v, int):
        digits, exp, neg = str(abs(v)), 0, v < 0
    else:
        d = v if isinstance(v, Decimal) else Decimal(str(v))
        if not d.is_finite():
            if d.is_nan():
                return _NUMHDR.pack(0, 0, NUMERIC_NAN, 0)
            return _NUMHDR.pack(0, 0, NUMERIC_PINF if d > 0 else NUMERIC_NINF, 0)
        sign, dtuple, exp = d.as_tuple()
        digits, neg = "".join(map(str, dtuple)), bool(sign)
        assert isinstance(exp, int)
    if exp > 0:
        digits += "0" * exp
        exp = 0
    scale = -exp
    if dscale is None:
        dscale = scale
    # pad the fraction to whole base-10000 groups, then the integer part on the left
    fpad = -scale % 4
    digits += "0" * fpad
    digits = "0" * (-len(digits) % 4) + digits
    groups = [int(digits[i : i + 4]) for i in range(0, len(digits), 4)]
    weight = len(groups) - (scale + fpad) // 4 - 1
    start = 0
    while start < len(groups) and groups[start] == 0:
        start += 1
        weight -= 1
    end = len(groups)
    while end > start and groups[end - 1] == 0:
        end -= 1
    groups = groups[start:end]
    if not groups:
        return _NUMHDR.pack(0, 0, NUMERIC_POS, dscale)
    n = len(groups)
    return _NUMHDR.pack(n, weight, NUMERIC_NEG if neg else NUMERIC_POS, dscale) + struct.pack(
        f">{n}H", *groups
    )


def _time_us(v: object) -> int:
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    return T.parse_timestamp_text("2000-01-01 " + str(v).strip())[0]


def _timetz_send(v: object) -> bytes:
    if isinstance(v, dt.time):
        off = v.utcoffset()
        secs = int(off.total_seconds()) if off is not None else 0
        return _QI.pack(_time_us(v), -secs)  # PG stores seconds *west* of UTC
    us, off = T.parse_timestamp_text("2000-01-01 " + str(v).strip())
    return _QI.pack(us, -(off or 0))


def _date_send(v: object) -> bytes:
    if type(v) is dt.date:
        return _I.pack(v.toordinal() - T.PG_EPOCH_ORDINAL)
    return _I.pack(T.date_to_pgdays(v))


def _interval_send(v: object) -> bytes:
    months, days, us = T.interval_parts(v)
    return _QII.pack(us, days, months)


def _text_send(v: object) -> bytes:
    return v.encode() if type(v) is str else str(v).encode()


_SCALAR_ENC: dict[str, Encoder] = {
    "bool": lambda v: b"\x01" if v else b"\x00",
    "int2": _H.pack,
    "int4": _I.pack,
    "int8": _Q.pack,
    "oid": struct.Struct(">I").pack,
    "float4": _F.pack,
    "float8": _D.pack,
    "numeric": numeric_send,
    "text": _text_send,
    "varchar": _text_send,
    "bpchar": _text_send,
    "name": _text_send,
    "char": lambda v: _text_send(v) or b"\x00",  # one byte, as char_send: '' is the zero byte
    "json": _text_send,
    "jsonb": lambda v: b"\x01" + _text_send(output_text(v)),
    "bytea": bytes,  # type: ignore[dict-item]
    "date": _date_send,
    "time": lambda v: _Q.pack(_time_us(v)),
    "timetz": _timetz_send,
    "timestamp": lambda v: _Q.pack(T.timestamp_to_pgus(v)),
    "timestamptz": lambda v: _Q.pack(T.timestamptz_to_pgus(v)),
    "interval": _interval_send,
    "uuid": lambda v: v.bytes if isinstance(v, uuid.UUID) else uuid.UUID(str(v)).bytes,
}


def binary_encoder(kind: str, typmod: int = -1) -> Encoder:
    if kind == "numeric" and typmod >= 4:
        scale = (typmod - 4) & 0xFFFF
        return lambda v: numeric_send(v, scale)
    return _SCALAR_ENC.get(kind, _text_send)


def _dims(v: list | tuple, depth: int) -> list[int]:
    dims = [len(v)]
    cur = v
    for _ in range(depth - 1):
        if not cur or not isinstance(cur[0], (list, tuple)):
            break
        cur = cur[0]
        dims.append(len(cur))
    return dims


_VEC_CACHE: dict[tuple[int, str], struct.Struct] = {}  # (length, struct code)


def array_binary_encoder(kind: str, depth: int) -> Encoder:
    """Encoder for LIST/ARRAY columns; nested lists must be rectangular (PG arrays are)."""
    elem_oid = BY_NAME[kind].oid
    enc = binary_encoder(kind)
    hdr1 = _ARRHDR.pack(1, 0, elem_oid)
    hdr1_null = _ARRHDR.pack(1, 1, elem_oid)
    empty = _ARRHDR.pack(0, 0, elem_oid)
    if kind in ("float4", "float8", "int2", "int4", "int8") and depth == 1:
        code, size = {"float4": ("f", 4), "float8": ("d", 8), "int2": ("h", 2)}.get(
            kind, ("i", 4) if kind == "int4" else ("q", 8)
        )

        def enc_fixed(v: object) -> bytes:
            n = len(v)  # type: ignore[arg-type]
            if n == 0:
                return empty
            if None in v:  # type: ignore[operator]
                return generic(v)
            st = _VEC_CACHE.get((n, code))
            if st is None:
                st = _VEC_CACHE.setdefault((n, code), struct.Struct(">" + ("i" + code) * n))
            args = [size] * (2 * n)
            args[1::2] = v  # type: ignore[index]
            return hdr1 + _II.pack(n, 1) + st.pack(*args)

        fast = enc_fixed
    else:
        fast = None

    def generic(v: object) -> bytes:
        dims = _dims(v, depth)  # type: ignore[arg-type]
        if 0 in dims:
            return empty
        nd = len(dims)
        parts: list[bytes] = []
        hasnull = False

        def walk(x: object, level: int) -> None:
            nonlocal hasnull
            if level < nd - 1:
                if not isinstance(x, (list, tuple)) or len(x) != dims[level]:
                    raise ValueError("multidimensional arrays must be rectangular (and not NULL)")
                for y in x:
                    walk(y, level + 1)
                return
            if not isinstance(x, (list, tuple)) or len(x) != dims[level]:
                raise ValueError("multidimensional arrays must be rectangular (and not NULL)")
            for e in x:
                if e is None:
                    hasnull = True
                    parts.append(b"\xff\xff\xff\xff")
                else:
                    b = enc(e)
                    parts.append(_I.pack(len(b)))
                    parts.append(b)

        walk(v, 0)
        head = hdr1_null if hasnull and nd == 1 else hdr1 if nd == 1 else None
        if head is None:
            head = _ARRHDR.pack(nd, 1 if hasnull else 0, elem_oid)
        return head + b"".join(_II.pack(d, 1) for d in dims) + b"".join(parts)

    return fast or generic


# ---------------------------------------------------------------- decoders


def _fixed(name: str, st: struct.Struct, post: Callable[[object], object] | None = None) -> Decoder:
    size = st.size

    def dec(b: bytes) -> object:
        if len(b) != size:
            _bad_len(name, b, size)
        v = st.unpack(b)[0]
        return post(v) if post else v

    return dec


def _bad_len(name: str, b: bytes, size: int) -> None:
    if len(b) < size:
        raise ParamDecodeError(
            f"insufficient data left in message: binary {name} needs {size} bytes, "
            f"got {len(b)} ({shorten(b)})",
            "08P01",
        )
    raise ParamDecodeError(
        f"incorrect binary data format for type {name}: {len(b)} bytes, expected {size} "
        f"({shorten(b)})",
        "22P03",
    )


def numeric_recv(b: bytes) -> Decimal:
    if len(b) < 8:
        _bad_len("numeric", b, 8)
    n, weight, sign, dscale = _NUMHDR.unpack_from(b)
    if n < 0 or len(b) != 8 + 2 * n:
        _bad_len("numeric", b, 8 + 2 * max(n, 0))
    if sign == NUMERIC_NAN:
        return Decimal("NaN")
    if sign in (NUMERIC_PINF, NUMERIC_NINF):
        return Decimal("Infinity" if sign == NUMERIC_PINF else "-Infinity")
    if sign not in (NUMERIC_POS, NUMERIC_NEG) or dscale > 0x3FFF:
        raise ParamDecodeError(
            f"invalid sign or scale in external numeric value ({shorten(b)})", "22P03"
        )
    groups = struct.unpack_from(f">{n}H", b, 8)
    if any(g >= 10000 for g in groups):
        raise ParamDecodeError(f"invalid digit in external numeric value ({shorten(b)})", "22P03")
    digits = "".join(f"{g:04d}" for g in groups) or "0"
    exp = (weight - n + 1) * 4 if n else 0
    d = Decimal(f"{'-' if sign == NUMERIC_NEG else ''}{digits}E{exp}")
    return d.quantize(Decimal(1).scaleb(-dscale), context=_BIG)


def _utf8(name: str) -> Decoder:
    def dec(b: bytes) -> str:
        try:
            s = bytes(b).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParamDecodeError(invalid_utf8(bytes(b), e.start), "22021") from None
        if "\x00" in s:  # Postgres's message names only the byte, whatever the type
            raise ParamDecodeError('invalid byte sequence for encoding "UTF8": 0x00', "22021")
        return s

    return dec


def _jsonb_recv(b: bytes) -> str:
    if not b:
        _bad_len("jsonb", b, 1)
    if b[0] != 1:
        raise ParamDecodeError(f"unsupported jsonb version number {b[0]}", "22P03")
    from proxy.wire.textparse import check_json

    return check_json(_utf8("jsonb")(b[1:]), "jsonb")  # type: ignore[arg-type]


def _json_recv(b: bytes) -> str:
    from proxy.wire.textparse import check_json

    return check_json(_utf8("json")(b), "json")  # type: ignore[arg-type]


def _date_from_pgdays(days: object) -> object:
    """date, or DuckDB text for what Python's date cannot hold (BC, >9999, infinity)."""
    assert isinstance(days, int)
    try:
        return dt.date.fromordinal(days + T.PG_EPOCH_ORDINAL)
    except (ValueError, OverflowError):
        return T.format_pg_date(days).replace(" BC", " (BC)")


def _ts_from_pgus(us: object) -> object:
    assert isinstance(us, int)
    try:
        return T.PG_EPOCH + dt.timedelta(microseconds=us)
    except OverflowError:
        return T.format_duck_timestamp(us, None)


def _tstz_from_pgus(us: object) -> object:
    assert isinstance(us, int)
    try:
        return T.PG_EPOCH_UTC + dt.timedelta(microseconds=us)
    except OverflowError:
        return T.format_duck_timestamp(us, 0)


def _time_from_us(us: object) -> object:
    assert isinstance(us, int)
    if not 0 <= us <= T.US_PER_DAY:
        raise ParamDecodeError(f"time out of range: {us}", "22008")
    if us == T.US_PER_DAY:
        return "24:00:00"
    s, f = divmod(us, 1_000_000)
    return dt.time(s // 3600, s // 60 % 60, s % 60, f)


def _timetz_recv(b: bytes) -> object:
    if len(b) != 12:
        _bad_len("time with time zone", b, 12)
    us, zone = _QI.unpack(b)
    if abs(zone) > 15 * 3600 + 59 * 60:
        raise ParamDecodeError(f"time zone displacement out of range: {zone}", "22009")
    if not 0 <= us <= T.US_PER_DAY:
        raise ParamDecodeError(f"time out of range: {us}", "22008")
    # text, because DuckDB's binder rejects tzinfo objects with negative offsets
    return T.format_time_us(us) + T.format_offset(-zone)


def _interval_recv(b: bytes) -> object:
    if len(b) != 16:
        _bad_len("interval", b, 16)
    us, days, months = _QII.unpack(b)
    return T.interval_param(months, days, us)


def _uuid_recv(b: bytes) -> uuid.UUID:
    if len(b) != 16:
        _bad_len("uuid", b, 16)
    return uuid.UUID(bytes=bytes(b))


def _bool_recv(b: bytes) -> bool:
    if len(b) != 1:
        _bad_len("boolean", b, 1)
    return b[0] != 0


_F32_BITS = struct.Struct(">f")

SCALAR_DEC: dict[str, Decoder] = {
    "bool": _bool_recv,
    "int2": _fixed("smallint", _H),
    "int4": _fixed("integer", _I),
    "int8": _fixed("bigint", _Q),
    "oid": _fixed("oid", struct.Struct(">I")),
    "float4": _fixed("real", _F),
    "float8": _fixed("double precision", _D),
    "numeric": numeric_recv,
    "text": _utf8("text"),
    "varchar": _utf8("character varying"),
    "bpchar": _utf8("character"),
    "name": _utf8("name"),
    "unknown": _utf8("unknown"),
    "char": _utf8('"char"'),
    "json": _json_recv,
    "jsonb": _jsonb_recv,
    "bytea": bytes,  # type: ignore[dict-item]
    "date": _fixed("date", _I, _date_from_pgdays),
    "time": _fixed("time", _Q, _time_from_us),
    "timetz": _timetz_recv,
    "timestamp": _fixed("timestamp", _Q, _ts_from_pgus),
    "timestamptz": _fixed("timestamp with time zone", _Q, _tstz_from_pgus),
    "interval": _interval_recv,
    "uuid": _uuid_recv,
}

MAXDIM = 6


def array_recv(elem_kind: str) -> Decoder:
    elem_oid = BY_NAME[elem_kind].oid
    edec = SCALAR_DEC[elem_kind]
    tname = BY_NAME[elem_kind].name + "[]"

    def dec(b: bytes) -> list:
        mv = memoryview(b)
        if len(mv) < 12:
            _bad_len(tname, b, 12)
        ndim, flags, oid = _ARRHDR.unpack_from(mv)
        if ndim < 0:
            raise ParamDecodeError(f"invalid number of dimensions: {ndim}", "22P03")
        if ndim > MAXDIM:
            raise ParamDecodeError(
                f"number of array dimensions ({ndim}) exceeds the maximum allowed ({MAXDIM})",
                "54000",
            )
        if flags not in (0, 1):
            raise ParamDecodeError("invalid array flags", "22P03")
        if oid != elem_oid:
            raise ParamDecodeError(
                f"binary data has array element type {oid} instead of expected {elem_oid}",
                "42804",
            )
        pos = 12
        if len(mv) < pos + 8 * ndim:
            _bad_len(tname, b, pos + 8 * ndim)
        dims = []
        total = 1
        for _ in range(ndim):
            n, _lb = _II.unpack_from(mv, pos)
            pos += 8
            if n < 0:
                raise ParamDecodeError("array dimension is negative", "22P03")
            dims.append(n)
            total *= n
        if ndim == 0 or total == 0:
            if pos != len(mv):
                raise ParamDecodeError(f"incorrect binary data format in {tname}", "22P03")
            return []
        # every element needs >= 4 bytes: reject hostile sizes before allocating
        if total * 4 > len(mv) - pos:
            _bad_len(tname, b, pos + total * 4)
        flat: list[object] = []
        for _ in range(total):
            if pos + 4 > len(mv):
                _bad_len(tname, b, pos + 4)
            ln = _I.unpack_from(mv, pos)[0]
            pos += 4
            if ln == -1:
                flat.append(None)
                continue
            if ln < 0 or pos + ln > len(mv):
                _bad_len(tname, b, pos + max(ln, 0))
            flat.append(edec(bytes(mv[pos : pos + ln])))
            pos += ln
        if pos != len(mv):
            raise ParamDecodeError(f"incorrect binary data format in {tname}", "22P03")
        return _reshape(flat, dims)

    return dec


def _reshape(flat: list, dims: list[int]) -> list:
    for d in reversed(dims[1:]):
        flat = [flat[i : i + d] for i in range(0, len(flat), d)]
    return flat


def binary_decoder(oid: int) -> Decoder:
    """Bind parameter in binary format -> Python value for DuckDB.  Unknown OIDs: text."""
    if oid in ELEM_OF_ARRAY:
        return array_recv(ELEM_OF_ARRAY[oid])
    t = BY_OID.get(oid)
    if t is None or t.name not in SCALAR_DEC:
        return SCALAR_DEC["text"]
    return SCALAR_DEC[t.name]
