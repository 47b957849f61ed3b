"""Postgres text-format output for DuckDB values (format code 0).

Each ``fmt_*`` turns one non-None Python value (as DuckDB's fetch returns it) into
the exact string PostgreSQL 15 prints with default settings (DateStyle ISO,
IntervalStyle postgres, extra_float_digits 1, bytea_output hex).  Array output
reuses the same formatters per element.
"""

from __future__ import annotations

import datetime as dt
import re
import struct
from collections.abc import Callable
from decimal import Context, Decimal

from proxy.core.pg_json import output_text
from proxy.wire import temporal as T
from proxy.wire.interval_iso import format_iso8601_interval

Fmt = Callable[[object], str]

_F32 = struct.Struct("f")


def _to_f32(x: float) -> float:
    return _F32.unpack(_F32.pack(x))[0]


def _pg_layout(mant_exp: str, limit: int) -> str:
    """Re-lay a '%e'-style string the way PG's float output does (sci if exp<-4 or >=limit)."""
    mant, _, ex = mant_exp.partition("e")
    neg = mant.startswith("-")
    digits = mant.lstrip("-").replace(".", "").rstrip("0") or "0"
    e = int(ex)
    if e < -4 or e >= limit:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        body += f"e{'-' if e < 0 else '+'}{abs(e):02d}"
    elif e >= 0:
        if len(digits) <= e + 1:
            body = digits + "0" * (e + 1 - len(digits))
        else:
            body = digits[: e + 1] + "." + digits[e + 1 :]
    else:
        body = "0." + "0" * (-e - 1) + digits
    return "-" + body if neg else body


def fmt_float8(v: float) -> str:
    """Shortest round-trip, PG layout: Python's repr has the digits, PG moves sci at 1e15."""
    r = repr(v)
    if "e" in r:
        return r  # Python and PG agree on sci layout ('1e+16', '1.5e-05')
    if r[-1] == "f":
        return "Infinity" if r == "inf" else "-Infinity"
    if r == "nan":
        return "NaN"
    if r.endswith(".0"):
        r = r[:-2]
    if v >= 1e15 or v <= -1e15:
        ip, _, fp = r.lstrip("-").partition(".")
        return _pg_layout(("-" if v < 0 else "") + ip + "." + fp + f"e{len(ip) - 1}", 15)
    return r


def fmt_float4(v: float) -> str:
    """Shortest decimal that reads back as the same float4 (what PG 12+ prints)."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if -1.2e-38 < v < 1.2e-38 and v:
        # subnormals carry few significant bits: search from 1 digit up
        for p in range(9):
            s = f"{v:.{p}e}"
            if _to_f32(float(s)) == v:
                return _pg_layout(s, 6)
    s = f"{v:.6g}"
    try:
        if _to_f32(float(s)) == v:
            return s  # %g with 6 digits uses exactly PG's float4 layout rule
        for p in (6, 7, 8):
            s = f"{v:.{p}e}"
            if _to_f32(float(s)) == v:
                break
    except OverflowError:
        s = f"{v:.8e}"
    return _pg_layout(s, 6)


def fmt_bool(v: object) -> str:
    return "t" if v else "f"


def fmt_int(v: object) -> str:
    return f"{v:d}"


_WIDE = Context(prec=100)  # above DECIMAL(38)'s digits: normalize never rounds


def trim_scale(v: object) -> object:
    """A Decimal without its fraction's trailing zeros (PostgreSQL's trim_scale): 1.50 ->
    1.5, 100.00 -> 100. Anything else unchanged."""
    if not isinstance(v, Decimal) or not v.is_finite() or v.as_tuple().exponent >= 0:  # type: ignore[operator]
        return v
    t = v.normalize(_WIDE)
    return t.quantize(1, context=_WIDE) if t.as_tuple().exponent > 0 else t  # type: ignore[operator]


def trim_nested(v: object) -> object:
    """trim_scale of every element of a (nested) list."""
    if isinstance(v, (list, tuple)):
        return [trim_nested(e) for e in v]
    return trim_scale(v)


def fmt_numeric(v: object) -> str:
    if isinstance(v, Decimal):
        if not v.is_finite():
            return "NaN" if v.is_nan() else ("Infinity" if v > 0 else "-Infinity")
        s = format(v, "f")
        if s[0] == "-" and v.is_zero():
            s = s[1:]  # PG has no negative zero numeric
        return s
    if isinstance(v, int):
        return f"{v:d}"
    if isinstance(v, float):
        return fmt_float8(v)
    return str(v)  # BIGNUM arrives as DuckDB text


def fmt_text(v: object) -> str:
    return v if isinstance(v, str) else str(v)


def fmt_bytea(v: object) -> str:
    return "\\x" + bytes(v).hex()  # type: ignore[arg-type]


def fmt_date(v: object) -> str:
    if type(v) is dt.date:
        return v.isoformat()
    return T.format_pg_date(T.date_to_pgdays(v))


def fmt_time(v: object) -> str:
    if isinstance(v, dt.time):
        s = v.replace(tzinfo=None).isoformat()
        return s.rstrip("0") if v.microsecond else s
    us, _off = T.parse_timestamp_text("2000-01-01 " + str(v).strip())
    return T.format_time_us(us)


def fmt_timetz(v: object) -> str:
    if isinstance(v, dt.time):
        off = v.utcoffset()
        secs = int(off.total_seconds()) if off is not None else 0
        return fmt_time(v) + T.format_offset(secs)
    us, off = T.parse_timestamp_text("2000-01-01 " + str(v).strip())
    return T.format_time_us(us) + T.format_offset(off or 0)


def fmt_timestamp(v: object) -> str:
    if type(v) is dt.datetime:
        s = v.isoformat(" ")
        return s.rstrip("0") if v.microsecond else s
    return T.format_pg_timestamp(T.timestamp_to_pgus(v))


def make_fmt_timestamptz(zone_name: str | None) -> Fmt:
    """TIMESTAMPTZ text is rendered in the session TimeZone, as PG does."""
    zone = T.resolve_zone(zone_name)

    def fmt_timestamptz(v: object) -> str:
        if type(v) is dt.datetime and v.tzinfo is not None:
            try:
                w = v.astimezone(zone)
                off = w.utcoffset()
                s = w.replace(tzinfo=None).isoformat(" ")
                if w.microsecond:
                    s = s.rstrip("0")
                return s + T.format_offset(int(off.total_seconds()) if off else 0)
            except OverflowError:
                pass
        return T.format_pg_timestamptz(T.timestamptz_to_pgus(v), zone)

    return fmt_timestamptz


def fmt_interval(v: object) -> str:
    return T.format_pg_interval(*T.interval_parts(v))


def fmt_interval_iso(v: object) -> str:
    """IntervalStyle iso_8601 (SET by ActiveRecord on every connection)."""
    return format_iso8601_interval(*T.interval_parts(v))


def fmt_uuid(v: object) -> str:
    return str(v)


# ------------------------------------------------------------ DuckDB's own text


def fmt_duck(v: object) -> str:
    """Best-effort DuckDB VARCHAR rendering for types PG lacks (STRUCT, MAP, UNION...).

    Exact only for scalars and strings: DuckDB's nested quoting rules depend on the
    type, so the engine should cast such columns to VARCHAR (see
    ``types.lossless_cast``); then the value arrives here as str and passes through.
    """
    if isinstance(v, str):
        return v
    return _duck_inner(v, top=True)


def _duck_inner(v: object, top: bool = False) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v if top else "'" + v.replace("'", "\\'") + "'"
    if isinstance(v, float):
        return fmt_float8(v).replace("Infinity", "inf").replace("NaN", "nan")
    if isinstance(v, (bytes, bytearray)):
        return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in v)
    if isinstance(v, dict):
        if set(v) == {"key", "value"} and isinstance(v["key"], list):
            items = zip(v["key"], v["value"], strict=False)
            return "{" + ", ".join(f"{_duck_inner(k)}={_duck_inner(x)}" for k, x in items) + "}"
        return "{" + ", ".join(f"'{k}': {_duck_inner(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_duck_inner(x) for x in v) + "]"
    if isinstance(v, dt.datetime):
        return fmt_timestamp(v.replace(tzinfo=None))
    return str(v)


# ------------------------------------------------------------------- arrays

# PG quotes an array element if it is empty, is NULL (any case), or has one of these.
_NEEDS_QUOTE = re.compile(r'[{}",\\ \t\n\r\v\f]')


def _quote(s: str) -> str:
    if s == "" or _NEEDS_QUOTE.search(s) or (len(s) == 4 and s.upper() == "NULL"):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def make_fmt_array(elem: Fmt, may_need_quotes: bool) -> Fmt:
    """'{1,2,NULL}' text; nested lists become '{{1,2},{3,4}}'."""

    def fmt_array(v: object) -> str:
        parts = []
        for e in v:  # type: ignore[attr-defined]
            if e is None:
                parts.append("NULL")
            elif isinstance(e, (list, tuple)):
                parts.append(fmt_array(e))
            elif may_need_quotes:
                parts.append(_quote(elem(e)))
            else:
                parts.append(elem(e))
        return "{" + ",".join(parts) + "}"

    return fmt_array


# Elements of these types never contain quote-worthy characters in PG output
# (date is missing on purpose: ' BC').
NO_QUOTE_KINDS = frozenset({"bool", "int2", "int4", "int8", "float4", "float8", "numeric", "uuid"})


def text_formatter(kind: str, zone: str | None = None, interval_style: str = "postgres") -> Fmt:
    """String formatter for a scalar kind (a PG type name from ``oids.SCALARS``)."""
    table: dict[str, Fmt] = {
        "bool": fmt_bool,
        "int2": fmt_int,
        "int4": fmt_int,
        "int8": fmt_int,
        "float4": fmt_float4,  # type: ignore[dict-item]
        "float8": fmt_float8,  # type: ignore[dict-item]
        "numeric": fmt_numeric,
        "bytea": fmt_bytea,
        "date": fmt_date,
        "time": fmt_time,
        "timetz": fmt_timetz,
        "timestamp": fmt_timestamp,
        "interval": fmt_interval,
        "uuid": fmt_uuid,
        "jsonb": lambda v: output_text(v if type(v) is str else str(v)),
    }
    if kind == "timestamptz":
        return make_fmt_timestamptz(zone)
    if kind == "interval" and interval_style == "iso_8601":
        return fmt_interval_iso
    if kind == "duck":
        return fmt_duck
    return table.get(kind, fmt_text)


def text_encoder(
    kind: str, zone: str | None = None, interval_style: str = "postgres"
) -> Callable[[object], bytes]:
    """Value -> PG text bytes.  Hot kinds get a direct function without a str hop."""
    if kind == "jsonb":
        return lambda v: output_text(v if type(v) is str else str(v)).encode()
    if kind in ("text", "varchar", "json", "bpchar", "name"):
        return lambda v: v.encode() if type(v) is str else str(v).encode()  # type: ignore
    if kind in ("int2", "int4", "int8"):
        return lambda v: b"%d" % v  # type: ignore[operator]
    if kind == "bool":
        return lambda v: b"t" if v else b"f"
    if kind == "bytea":
        return lambda v: b"\\x" + bytes(v).hex().encode()  # type: ignore[arg-type]
    f = text_formatter(kind, zone, interval_style)
    return lambda v: f(v).encode()


def array_text_encoder(
    kind: str, zone: str | None = None, interval_style: str = "postgres"
) -> Callable[[object], bytes]:
    f = make_fmt_array(text_formatter(kind, zone, interval_style), kind not in NO_QUOTE_KINDS)
    return lambda v: f(v).encode()
