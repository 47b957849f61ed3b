"""Bind parameters in text format (format code 0) -> Python values DuckDB binds.

Accepts what PostgreSQL's type input functions accept for the common spellings;
anything else raises ParamDecodeError with PG's SQLSTATE and a message in PG's
wording ('invalid input syntax for type integer: "abc"').
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
import struct
import uuid
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from proxy.wire import temporal as T
from proxy.wire.errors import invalid_utf8
from proxy.wire.oids import BY_OID, ELEM_OF_ARRAY, ParamDecodeError, shorten

Decoder = Callable[[bytes], object]
StrParser = Callable[[str], object]


def _syntax(tname: str, s: str) -> ParamDecodeError:
    return ParamDecodeError(f'invalid input syntax for type {tname}: "{shorten(s)}"', "22P02")


def _range(tname: str, s: str) -> ParamDecodeError:
    return ParamDecodeError(f'value "{shorten(s)}" is out of range for type {tname}', "22003")


def _utf8(b: bytes) -> str:
    try:
        s = bytes(b).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParamDecodeError(invalid_utf8(bytes(b), e.start), "22021") from None
    if "\x00" in s:
        raise ParamDecodeError('invalid byte sequence for encoding "UTF8": 0x00', "22021")
    return s


# ------------------------------------------------------------------ scalars

_INT_RE = re.compile(r"\s*[+-]?\d+\s*", re.ASCII)


def _int_parser(tname: str, bits: int) -> StrParser:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def parse(s: str) -> int:
        if not _INT_RE.fullmatch(s):
            raise _syntax(tname, s)
        v = int(s)
        if not lo <= v <= hi:
            raise _range(tname, s)
        return v

    return parse


def parse_bool(s: str) -> bool:
    t = s.strip().lower()
    if t and ("true".startswith(t) or "yes".startswith(t) or t == "1"):
        return True
    if t and ("false".startswith(t) or "no".startswith(t) or t == "0"):
        return False
    if len(t) >= 2 and "on".startswith(t):
        return True
    if len(t) >= 2 and "off".startswith(t):
        return False
    raise _syntax("boolean", s)


_FLOAT_RE = re.compile(
    r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)\s*",
    re.ASCII | re.IGNORECASE,
)
_F32 = struct.Struct("f")


def _float_parser(tname: str, single: bool) -> StrParser:
    def parse(s: str) -> float:
        if not _FLOAT_RE.fullmatch(s):
            raise _syntax(tname, s)
        v = float(s)
        t = s.strip().lower().lstrip("+-")
        if t[:1].isdigit() or t[:1] == ".":
            if v in (float("inf"), float("-inf")):
                raise _range(tname, s)
            if v == 0.0 and re.search(r"[1-9]", t.split("e")[0]):
                raise _range(tname, s)  # underflow
            if single:
                try:
                    v32 = _F32.unpack(_F32.pack(v))[0]
                except OverflowError:
                    raise _range(tname, s) from None
                if v32 == 0.0 and v != 0.0:
                    raise _range(tname, s)
                v = v32
        return v

    return parse


_NUM_RE = re.compile(
    r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)\s*",
    re.ASCII | re.IGNORECASE,
)


def parse_numeric(s: str) -> Decimal:
    if not _NUM_RE.fullmatch(s):
        raise _syntax("numeric", s)
    try:
        d = Decimal(s.strip())
    except InvalidOperation:
        raise _syntax("numeric", s) from None
    if d.is_finite() and d.adjusted() >= 131072:
        raise _range("numeric", s)
    return d


_OCT = re.compile(r"\\(\\|[0-3][0-7]{2})")


def parse_bytea(s: str) -> bytes:
    if s.startswith("\\x"):
        hexs = "".join(s[2:].split())  # PG allows whitespace between hex digit pairs
        try:
            return bytes.fromhex(hexs)
        except ValueError:
            raise _syntax("bytea", s) from None
    out = bytearray()
    i = 0
    while i < len(s):
        ch = s[i]
        if ch != "\\":
            out += ch.encode()
            i += 1
            continue
        m = _OCT.match(s, i)
        if not m:
            raise _syntax("bytea", s)
        g = m[1]
        out.append(92 if g == "\\" else int(g, 8))
        i = m.end()
    return bytes(out)


def check_json(s: str, tname: str = "json") -> str:
    """Validate like PG's json input (no NaN/Infinity), pass the text through unchanged."""

    def bad_const(c: str) -> object:
        raise ValueError(c)

    try:
        json.loads(s, parse_constant=bad_const)
    except (ValueError, RecursionError):
        raise _syntax(tname, s) from None
    return s


def parse_uuid(s: str) -> uuid.UUID:
    t = s.strip()
    if t.startswith("{") and t.endswith("}"):
        t = t[1:-1]
    hexs = t.replace("-", "")
    if len(hexs) != 32 or not re.fullmatch(r"[0-9a-fA-F]{32}", hexs) or t.startswith("-"):
        raise _syntax("uuid", s)
    return uuid.UUID(hex=hexs)


def parse_date(s: str) -> object:
    try:
        days = T.parse_date_text(s)
    except (T.TemporalSyntaxError, ValueError):
        raise ParamDecodeError(
            f'invalid input syntax for type date: "{shorten(s)}"', "22007"
        ) from None
    try:
        return dt.date.fromordinal(days + T.PG_EPOCH_ORDINAL)
    except (ValueError, OverflowError):
        return T.format_pg_date(days).replace(" BC", " (BC)")  # DuckDB casts this text


def _ts_parser(with_tz: bool, zone_name: str | None) -> StrParser:
    zone = T.resolve_zone(zone_name)
    tname = "timestamp with time zone" if with_tz else "timestamp without time zone"

    def parse(s: str) -> object:
        try:
            us, off = T.parse_timestamp_text(s)
        except (T.TemporalSyntaxError, ValueError):
            raise ParamDecodeError(
                f'invalid input syntax for type {tname}: "{shorten(s)}"', "22007"
            ) from None
        if us in (T.TS_NOEND, T.TS_NOBEGIN):
            return "infinity" if us == T.TS_NOEND else "-infinity"
        if not with_tz:
            return _naive_or_text(us)  # PG ignores an offset given for timestamp
        if off is None:  # wall time in the session zone
            off = T.zone_offset_at(zone, us)
            off = T.zone_offset_at(zone, us - off * 1_000_000)
        utc = us - off * 1_000_000
        try:
            return T.PG_EPOCH_UTC + dt.timedelta(microseconds=utc)
        except OverflowError:
            return T.format_duck_timestamp(utc, 0)

    return parse


def _naive_or_text(us: int) -> object:
    try:
        return T.PG_EPOCH + dt.timedelta(microseconds=us)
    except OverflowError:
        return T.format_duck_timestamp(us, None)


def parse_time(s: str) -> object:
    try:
        us, _off = T.parse_timestamp_text("2000-01-01 " + s.strip())
    except (T.TemporalSyntaxError, ValueError):
        raise ParamDecodeError(
            f'invalid input syntax for type time: "{shorten(s)}"', "22007"
        ) from None
    if us == T.US_PER_DAY:
        return "24:00:00"
    sec, f = divmod(us, 1_000_000)
    return dt.time(sec // 3600, sec // 60 % 60, sec % 60, f)


def parse_timetz(s: str) -> str:
    """Normalised text: DuckDB's binder rejects tzinfo with a negative offset, text casts."""
    try:
        us, off = T.parse_timestamp_text("2000-01-01 " + s.strip())
    except (T.TemporalSyntaxError, ValueError):
        raise ParamDecodeError(
            f'invalid input syntax for type time with time zone: "{shorten(s)}"', "22007"
        ) from None
    if not 0 <= us <= T.US_PER_DAY:
        raise ParamDecodeError(
            f'invalid input syntax for type time with time zone: "{shorten(s)}"', "22007"
        )
    return T.format_time_us(us) + T.format_offset(off or 0)


def parse_interval(s: str) -> object:
    """timedelta when there are no months (DuckDB binds it as INTERVAL exactly);
    otherwise DuckDB-castable text, because timedelta cannot carry months."""
    try:
        months, days, us = T.parse_interval_text(s)
    except (T.TemporalSyntaxError, ValueError, ArithmeticError):
        raise ParamDecodeError(
            f'invalid input syntax for type interval: "{shorten(s)}"', "22007"
        ) from None
    return T.interval_param(months, days, us)


def _scalar_parsers(zone: str | None) -> dict[str, StrParser]:
    return {
        "bool": parse_bool,
        "int2": _int_parser("smallint", 16),
        "int4": _int_parser("integer", 32),
        "int8": _int_parser("bigint", 64),
        "oid": _int_parser("oid", 33),
        "float4": _float_parser("real", True),
        "float8": _float_parser("double precision", False),
        "numeric": parse_numeric,
        "bytea": parse_bytea,
        "json": check_json,
        "jsonb": lambda s: check_json(s, "jsonb"),
        "uuid": parse_uuid,
        "date": parse_date,
        "time": parse_time,
        "timetz": parse_timetz,
        "timestamp": _ts_parser(False, zone),
        "timestamptz": _ts_parser(True, zone),
        "interval": parse_interval,
    }


# ------------------------------------------------------------------- arrays

_ARR_WS = " \t\n\r\v\f"


def parse_array(s: str, elem: StrParser, tname: str, brackets: bool = False) -> list:
    """PG array literal '{1,"a b",NULL,{2,3}}' (optionally '[1:2]={...}') -> nested lists.

    With `brackets` (float arrays), pgvector's text form '[1,2.5,-3e0]' is accepted too:
    clients bind embeddings that way (vector columns are FLOAT[n] here, described as
    float4[]), and '[' without a following '=' cannot begin a PostgreSQL array literal.
    """
    t = s.strip(_ARR_WS)
    if brackets and t.startswith("[") and "=" not in t:
        return _parse_bracket_list(t, s, elem, tname)
    if t.startswith("["):
        eq = t.find("=")
        if eq < 0 or not re.fullmatch(r"(\[\s*-?\d+\s*(:\s*-?\d+\s*)?\])+\s*", t[:eq]):
            raise _syntax(tname, s)
        t = t[eq + 1 :].strip(_ARR_WS)
    if not t.startswith("{"):
        raise ParamDecodeError(f'malformed array literal: "{shorten(s)}"', "22P02")
    pos = 0
    n = len(t)

    def fail() -> ParamDecodeError:
        return ParamDecodeError(f'malformed array literal: "{shorten(s)}"', "22P02")

    def parse_level(depth: int) -> list:
        nonlocal pos
        if depth > 6:
            raise ParamDecodeError(
                "number of array dimensions exceeds the maximum allowed (6)", "54000"
            )
        assert t[pos] == "{"
        pos += 1
        out: list = []
        while pos < n and t[pos] in _ARR_WS:
            pos += 1
        if pos < n and t[pos] == "}":
            pos += 1
            return out
        while True:
            while pos < n and t[pos] in _ARR_WS:
                pos += 1
            if pos >= n:
                raise fail()
            ch = t[pos]
            if ch == "{":
                out.append(parse_level(depth + 1))
            elif ch == '"':
                pos += 1
                buf = []
                while True:
                    if pos >= n:
                        raise fail()
                    c = t[pos]
                    if c == "\\":
                        if pos + 1 >= n:
                            raise fail()
                        buf.append(t[pos + 1])
                        pos += 2
                    elif c == '"':
                        pos += 1
                        break
                    else:
                        buf.append(c)
                        pos += 1
                out.append(elem("".join(buf)))
            else:
                buf = []
                escaped = False
                while pos < n and t[pos] not in ",}":
                    c = t[pos]
                    if c in '{"':
                        raise fail()
                    if c == "\\":
                        if pos + 1 >= n:
                            raise fail()
                        buf.append(t[pos + 1])
                        escaped = True
                        pos += 2
                        continue
                    buf.append(c)
                    pos += 1
                raw = "".join(buf).strip(_ARR_WS)
                if raw == "":
                    raise fail()
                out.append(None if not escaped and raw.upper() == "NULL" else elem(raw))
            while pos < n and t[pos] in _ARR_WS:
                pos += 1
            if pos >= n:
                raise fail()
            if t[pos] == ",":
                pos += 1
                continue
            if t[pos] == "}":
                pos += 1
                return out
            raise fail()

    result = parse_level(1)
    if t[pos:].strip(_ARR_WS):
        raise fail()
    return result


def _parse_bracket_list(t: str, s: str, elem: StrParser, tname: str) -> list:
    """pgvector's '[1, 2.5, -3e0]': one flat list of elements, no NULLs, no quoting."""
    if not t.endswith("]"):
        raise _syntax(tname, s)
    inner = t[1:-1].strip(_ARR_WS)
    if not inner:
        return []
    out = []
    for part in inner.split(","):
        raw = part.strip(_ARR_WS)
        if not raw or any(c in raw for c in '[]{}"\\'):
            raise _syntax(tname, s)
        out.append(elem(raw))
    return out


# ------------------------------------------------------------------ factory

# Array element types whose arrays also take pgvector's '[...]' text (vector is FLOAT[n]).
_VECTOR_ELEMS = frozenset({"float4", "float8"})


@functools.lru_cache(maxsize=512)  # pure; Bind calls it per parameter of every execution
def text_decoder(oid: int, zone: str | None = None) -> Decoder:
    """Decoder for a text-format Bind parameter of type ``oid`` (0/unknown -> str)."""
    parsers = _scalar_parsers(zone)
    if oid in ELEM_OF_ARRAY:
        ekind = ELEM_OF_ARRAY[oid]
        ep = parsers.get(ekind, _identity)
        tname = (BY_OID[oid].name[1:]) + "[]"
        brackets = ekind in _VECTOR_ELEMS
        return lambda b: parse_array(_utf8(b), ep, tname, brackets)
    t = BY_OID.get(oid)
    p = parsers.get(t.name) if t else None
    if p is None:
        return _utf8
    return lambda b: p(_utf8(b))


def _identity(s: str) -> str:
    return s
