"""Calendar arithmetic and text forms for dates, times, timestamps and intervals.

Python's datetime stops at years 1..9999; Postgres and DuckDB do not.  DuckDB's
Python API returns such values as DuckDB's own strings ('0044-03-15 (BC)',
'10000-01-01 00:00:00+00'), and -- lossily -- maps +-infinity to date.max/min and
datetime.max/min.  Everything here therefore also works on plain integers:
PG days since 2000-01-01 and PG microseconds since 2000-01-01 00:00:00 UTC.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

from proxy.wire.interval_iso import parse_iso8601_interval

PG_EPOCH_DATE = dt.date(2000, 1, 1)
PG_EPOCH_ORDINAL = PG_EPOCH_DATE.toordinal()  # 730120
PG_EPOCH = dt.datetime(2000, 1, 1)
PG_EPOCH_UTC = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
UNIX_TO_PG_DAYS = 10957
US_PER_DAY = 86_400_000_000
DATE_NOBEGIN = -(2**31)  # PG's -infinity / infinity for date
DATE_NOEND = 2**31 - 1
TS_NOBEGIN = -(2**63)  # ... and for timestamp(tz)
TS_NOEND = 2**63 - 1
UTC = dt.UTC


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar, any year (astronomical)."""
    y -= m <= 2
    era = y // 400  # Python floors; no C-style adjustment
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def format_pg_date(pgdays: int) -> str:
    """PG DateStyle ISO text for a date given as days since 2000-01-01."""
    if pgdays == DATE_NOEND:
        return "infinity"
    if pgdays == DATE_NOBEGIN:
        return "-infinity"
    y, m, d = civil_from_days(pgdays + UNIX_TO_PG_DAYS)
    if y <= 0:
        return f"{1 - y:04d}-{m:02d}-{d:02d} BC"
    return f"{y:04d}-{m:02d}-{d:02d}"


def format_time_us(us: int) -> str:
    """HH:MM:SS[.frac] with PG's trimming of trailing zeros in the fraction."""
    s, f = divmod(us, 1_000_000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    if f:
        return f"{h:02d}:{m:02d}:{s:02d}.{f:06d}".rstrip("0")
    return f"{h:02d}:{m:02d}:{s:02d}"


def format_offset(seconds_east: int) -> str:
    """PG prints +HH, +HH:MM or +HH:MM:SS, as short as exact."""
    sign = "-" if seconds_east < 0 else "+"
    a = abs(seconds_east)
    h, rem = divmod(a, 3600)
    m, s = divmod(rem, 60)
    if s:
        return f"{sign}{h:02d}:{m:02d}:{s:02d}"
    if m:
        return f"{sign}{h:02d}:{m:02d}"
    return f"{sign}{h:02d}"


def format_pg_timestamp(us: int, offset: int | None = None) -> str:
    """Timestamp text from PG microseconds (local wall time); offset seconds east for tz."""
    if us == TS_NOEND:
        return "infinity"
    if us == TS_NOBEGIN:
        return "-infinity"
    days, tod = divmod(us, US_PER_DAY)
    y, m, d = civil_from_days(days + UNIX_TO_PG_DAYS)
    bc = y <= 0
    s = f"{1 - y if bc else y:04d}-{m:02d}-{d:02d} {format_time_us(tod)}"
    if offset is not None:
        s += format_offset(offset)
    return s + " BC" if bc else s


def format_duck_timestamp(us: int, offset: int | None) -> str:
    """DuckDB-castable text for timestamps Python cannot hold: '0044-03-15 (BC) 12:00:00+00'."""
    s = format_pg_timestamp(us, offset)
    if s.endswith(" BC"):
        s = s[:-3]
        cut = s.index(" ")
        s = s[:cut] + " (BC)" + s[cut:]
    return s


# DuckDB's own VARCHAR forms of out-of-range values, e.g. '0002-11-28 (BC) 12:00:00+00'.
_DUCK_TS = re.compile(
    r"\s*(-?\d+)-(\d{1,2})-(\d{1,2})(\s*\(?BC\)?)?"
    r"(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d+))?)?)?"
    r"\s*(?:(?:([+-])(\d{1,2})(?::?(\d\d))?(?::?(\d\d))?)|(Z|UTC))?"
    r"(\s*BC)?\s*$",
    re.ASCII | re.IGNORECASE,
)


class TemporalSyntaxError(ValueError):
    pass


def frac_to_us(frac: str | None) -> int:
    """Fraction digits to microseconds, rounding half up beyond 6 digits (as PG does)."""
    if not frac:
        return 0
    us = int(frac[:6].ljust(6, "0"))
    if len(frac) > 6 and frac[6] >= "5":
        us += 1
    return us


def parse_timestamp_text(s: str) -> tuple[int, int | None]:
    """Parse an ISO-like timestamp (DuckDB or PG form, optional BC and offset).

    Returns (PG microseconds of the wall time, offset seconds east or None).
    Infinity maps to TS_NOEND/TS_NOBEGIN.
    """
    low = s.strip().lower()
    if low in ("infinity", "+infinity"):
        return TS_NOEND, None
    if low == "-infinity":
        return TS_NOBEGIN, None
    if low == "epoch":
        return -UNIX_TO_PG_DAYS * US_PER_DAY, 0
    mt = _DUCK_TS.match(s)
    if not mt:
        raise TemporalSyntaxError(s)
    y, mo, d = int(mt[1]), int(mt[2]), int(mt[3])
    if mt[4] or mt[14]:
        if y <= 0:
            raise TemporalSyntaxError(s)
        y = 1 - y
    hh, mi, ss = int(mt[5] or 0), int(mt[6] or 0), int(mt[7] or 0)
    if not (1 <= mo <= 12 and 1 <= d <= _month_len(y, mo)):
        raise TemporalSyntaxError(s)
    if hh > 24 or mi > 59 or ss > 60 or (hh == 24 and (mi or ss or mt[8])):
        raise TemporalSyntaxError(s)
    days = days_from_civil(y, mo, d) - UNIX_TO_PG_DAYS
    us = days * US_PER_DAY + ((hh * 60 + mi) * 60 + ss) * 1_000_000 + frac_to_us(mt[8])
    off: int | None = None
    if mt[9]:
        off = int(mt[10]) * 3600 + int(mt[11] or 0) * 60 + int(mt[12] or 0)
        if mt[9] == "-":
            off = -off
    elif mt[13]:
        off = 0
    return us, off


def _month_len(y: int, m: int) -> int:
    if m == 2:
        return 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    return 30 if m in (4, 6, 9, 11) else 31


def parse_date_text(s: str) -> int:
    """PG days since 2000-01-01 from ISO/DuckDB date text (time part ignored)."""
    low = s.strip().lower()
    if low in ("infinity", "+infinity"):
        return DATE_NOEND
    if low == "-infinity":
        return DATE_NOBEGIN
    us, _off = parse_timestamp_text(s)
    return us // US_PER_DAY


def date_to_pgdays(v: object) -> int:
    if isinstance(v, dt.date):
        return v.toordinal() - PG_EPOCH_ORDINAL
    return parse_date_text(str(v))


def naive_to_pgus(v: dt.datetime) -> int:
    delta = v - PG_EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def timestamp_to_pgus(v: object) -> int:
    """PG microseconds for TIMESTAMP values (naive datetime or DuckDB text)."""
    if isinstance(v, dt.datetime):
        return naive_to_pgus(v.replace(tzinfo=None))
    return parse_timestamp_text(str(v))[0]


def timestamptz_to_pgus(v: object) -> int:
    """PG microseconds (UTC) for TIMESTAMPTZ values.

    Aware datetimes are exact.  A *naive* datetime only appears for DuckDB's
    +-infinity (it returns datetime.max / datetime.min without tzinfo).
    Text carries its own offset (DuckDB prints in its TimeZone setting).
    """
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            return TS_NOEND if v.year == 9999 else TS_NOBEGIN if v.year == 1 else naive_to_pgus(v)
        delta = v - PG_EPOCH_UTC
        return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    us, off = parse_timestamp_text(str(v))
    if us in (TS_NOEND, TS_NOBEGIN):
        return us
    return us - (off or 0) * 1_000_000


def resolve_zone(name: str | None) -> dt.tzinfo:
    """Session TimeZone -> tzinfo.  IANA names; also '+05:30'/'-7' as ISO offsets."""
    if not name or name.upper() in ("UTC", "ETC/UTC", "GMT", "Z", "ZULU", "UCT"):
        return UTC
    try:
        return ZoneInfo(name)
    except Exception:  # noqa: BLE001 - any bad key falls through to numeric parsing
        mt = re.fullmatch(r"\s*([+-]?)(\d{1,2})(?::(\d\d))?\s*", name)
        if mt:
            secs = int(mt[2]) * 3600 + int(mt[3] or 0) * 60
            return dt.timezone(dt.timedelta(seconds=-secs if mt[1] == "-" else secs))
        return UTC


def zone_offset_at(zone: dt.tzinfo, utc_us: int) -> int:
    """Offset (seconds east) of zone at a UTC instant; clamps outside datetime's range."""
    if zone is UTC:
        return 0
    lo, hi = -730119 * US_PER_DAY, 2921939 * US_PER_DAY  # 0001-01-02 .. 9999-12-30
    clamped = min(max(utc_us, lo), hi)
    inst = PG_EPOCH_UTC + dt.timedelta(microseconds=clamped)
    off = inst.astimezone(zone).utcoffset()
    return int(off.total_seconds()) if off is not None else 0


def format_pg_timestamptz(utc_us: int, zone: dt.tzinfo) -> str:
    if utc_us in (TS_NOEND, TS_NOBEGIN):
        return format_pg_timestamp(utc_us)
    off = zone_offset_at(zone, utc_us)
    return format_pg_timestamp(utc_us + off * 1_000_000, off)


# ---------------------------------------------------------------- intervals

_IV_UNIT = re.compile(r"([+-]?\d+(?:\.\d*)?)\s*([a-z]+)", re.ASCII)
_IV_TIME = re.compile(r"([+-]?)(\d+):(\d\d)(?::(\d\d)(?:\.(\d+))?)?", re.ASCII)
_US_UNITS = {
    "microsecond": 1,
    "microseconds": 1,
    "us": 1,
    "usec": 1,
    "usecs": 1,
    "millisecond": 1000,
    "milliseconds": 1000,
    "ms": 1000,
    "msec": 1000,
    "msecs": 1000,
    "second": 10**6,
    "seconds": 10**6,
    "sec": 10**6,
    "secs": 10**6,
    "s": 10**6,
    "minute": 60 * 10**6,
    "minutes": 60 * 10**6,
    "min": 60 * 10**6,
    "mins": 60 * 10**6,
    "m": 60 * 10**6,
    "hour": 3600 * 10**6,
    "hours": 3600 * 10**6,
    "h": 3600 * 10**6,
    "hr": 3600 * 10**6,
    "hrs": 3600 * 10**6,
}
_DAY_UNITS = {"day": 1, "days": 1, "d": 1, "week": 7, "weeks": 7, "w": 7}
_MON_UNITS = {
    "month": 1,
    "months": 1,
    "mon": 1,
    "mons": 1,
    "year": 12,
    "years": 12,
    "y": 12,
    "yr": 12,
    "yrs": 12,
    "decade": 120,
    "decades": 120,
    "century": 1200,
    "centuries": 1200,
    "millennium": 12000,
    "millennia": 12000,
}


def parse_interval_text(s: str) -> tuple[int, int, int]:
    """(months, days, microseconds) from PG 'postgres'-style or DuckDB interval text.

    Covers '1 year 2 mons 3 days 04:05:06.5', '-1 days +01:00:00', '@ 1 hour ago',
    '14 months 3 days 14400000000 microseconds'.  Fractional units spill down
    (PG semantics: 1.5 months = 1 month 15 days).
    """
    text = s.strip().lower()
    if text.startswith("p"):  # ISO 8601 'P1DT2H', accepted in every IntervalStyle
        iso = parse_iso8601_interval(text)
        if iso is None:
            raise TemporalSyntaxError(s)
        return iso
    ago = False
    if text.startswith("@"):
        text = text[1:]
    if text.endswith(" ago"):
        ago, text = True, text[:-4]
    months = days = us = 0
    seen = False
    pos = 0
    tm = _IV_TIME.search(text)
    rest = text
    if tm:
        sign = -1 if tm[1] == "-" else 1
        us += sign * (
            (int(tm[2]) * 3600 + int(tm[3]) * 60 + int(tm[4] or 0)) * 10**6 + frac_to_us(tm[5])
        )
        rest = text[: tm.start()] + " " + text[tm.end() :]
        seen = True
    for mt in _IV_UNIT.finditer(rest):
        if rest[pos : mt.start()].strip():
            raise TemporalSyntaxError(s)
        pos = mt.end()
        num, unit = mt[1], mt[2]
        seen = True
        if unit in _MON_UNITS:
            total = _dec(num) * _MON_UNITS[unit]
            whole = int(total)
            months += whole
            fd = (total - whole) * 30
            days += int(fd)
            us += round((fd - int(fd)) * US_PER_DAY)
        elif unit in _DAY_UNITS:
            total = _dec(num) * _DAY_UNITS[unit]
            days += int(total)
            us += round((total - int(total)) * US_PER_DAY)
        elif unit in _US_UNITS:
            us += round(_dec(num) * _US_UNITS[unit])
        else:
            raise TemporalSyntaxError(s)
    if rest[pos:].strip() or not seen:
        raise TemporalSyntaxError(s)
    if ago:
        months, days, us = -months, -days, -us
    return months, days, us


def _dec(num: str):  # noqa: ANN202 - Decimal, kept exact for fractional units
    from decimal import Decimal

    return Decimal(num)


def format_pg_interval(months: int, days: int, us: int) -> str:
    """IntervalStyle 'postgres' exactly as PG's EncodeInterval prints it."""
    year = abs(months) // 12 * (1 if months >= 0 else -1)
    mon = months - year * 12
    out: list[str] = []
    is_before = False
    for value, unit in ((year, "year"), (mon, "mon"), (days, "day")):
        if value == 0:
            continue
        plus = "+" if is_before and value > 0 else ""
        out.append(f"{plus}{value} {unit}{'' if value == 1 else 's'}")
        is_before = value < 0
    if not out or us != 0:
        minus = us < 0
        sign = "-" if minus else ("+" if is_before else "")
        out.append(sign + format_time_us(abs(us)))
    return " ".join(out)


def timedelta_to_interval(v: dt.timedelta) -> tuple[int, int, int]:
    """DuckDB folds months into 30-day blocks when it returns a timedelta: that is lost.

    We split sign-magnitude: whole days go to the day field, the rest to time.
    """
    total = (v.days * 86400 + v.seconds) * 1_000_000 + v.microseconds
    neg = total < 0
    d, rem = divmod(abs(total), US_PER_DAY)
    return (0, -d, -rem) if neg else (0, d, rem)


def interval_parts(v: object) -> tuple[int, int, int]:
    if isinstance(v, dt.timedelta):
        return timedelta_to_interval(v)
    if isinstance(v, tuple) and len(v) == 3:
        return v  # (months, days, micros) as produced by a lossless engine cast
    if isinstance(v, dict):  # struct {months, days, micros} from the engine
        return int(v["months"]), int(v["days"]), int(v["micros"])
    return parse_interval_text(str(v))


def interval_param(months: int, days: int, us: int) -> object:
    """Bind value for an interval: timedelta only where DuckDB maps it back exactly
    (no months, days >= 0, 0 <= time < 1 day); otherwise DuckDB-castable text."""
    if months == 0 and days >= 0 and 0 <= us < US_PER_DAY and days < 999_999_999:
        return dt.timedelta(days=days, microseconds=us)
    return f"{months} months {days} days {us} microseconds"
