"""ISO 8601 intervals: IntervalStyle 'iso_8601' output ('P1Y2M3DT4H5M6.5S') and the
designator form PostgreSQL accepts as interval input in every IntervalStyle.

ActiveRecord sets `IntervalStyle = iso_8601` on every connection and sends durations
as `duration.iso8601`; both follow PostgreSQL 15's EncodeInterval /
DecodeISO8601Interval (src/backend/utils/adt/datetime.c).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal

US_PER_DAY = 86_400_000_000
US_PER_HOUR = 3_600_000_000
US_PER_MINUTE = 60_000_000
US_PER_SECOND = 1_000_000


def _trunc_div(a: int, b: int) -> int:
    """C's integer division (toward zero), as PostgreSQL splits fields."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def format_iso8601_interval(months: int, days: int, us: int) -> str:
    """IntervalStyle 'iso_8601' as PostgreSQL prints it: each field with its own sign,
    zero fields left out, 'PT0S' for a zero interval."""
    year = _trunc_div(months, 12)
    mon = months - year * 12
    hour = _trunc_div(us, US_PER_HOUR)
    rest = us - hour * US_PER_HOUR
    minute = _trunc_div(rest, US_PER_MINUTE)
    rest -= minute * US_PER_MINUTE
    if not (months or days or us):
        return "PT0S"
    out = ["P"]
    out += [f"{v}{c}" for v, c in ((year, "Y"), (mon, "M"), (days, "D")) if v]
    if us:
        out.append("T")
    out += [f"{v}{c}" for v, c in ((hour, "H"), (minute, "M")) if v]
    if rest:
        sec, frac = divmod(abs(rest), US_PER_SECOND)
        text = str(sec) + (f".{frac:06d}".rstrip("0") if frac else "")
        out.append(("-" if rest < 0 else "") + text + "S")
    return "".join(out)


_ISO_PART = re.compile(r"([+-]?\d*(?:\.\d*)?)([YMWDHS])", re.ASCII)


def parse_iso8601_interval(text: str) -> tuple[int, int, int] | None:
    """(months, days, microseconds) of 'P[nY][nM][nW][nD][T[nH][nM][nS]]', numbers signed
    and fractional (a fraction spills into the smaller fields as PostgreSQL's does); None
    when `text` is not of that form."""
    s = text.strip().upper()
    if len(s) < 2 or s[0] != "P":
        return None
    date_part, _, time_part = s[1:].partition("T")
    if "T" in time_part or (not date_part and not time_part):
        return None
    months = days = 0
    us = Decimal(0)
    for part, units in ((date_part, "YMWD"), (time_part, "HMS")):
        pos = 0
        for m in _ISO_PART.finditer(part):
            if m.start() != pos or m[2] not in units or m[1] in ("", "+", "-", "."):
                return None
            pos = m.end()
            value = Decimal(m[1])
            whole = int(value)
            frac = value - whole
            unit = m[2] if units == "YMWD" else "t" + m[2]
            if unit == "Y":
                months += whole * 12 + int((frac * 12).to_integral_value(ROUND_HALF_EVEN))
            elif unit == "M":
                months += whole
                frac_days = frac * 30
                days += int(frac_days)
                us += (frac_days - int(frac_days)) * US_PER_DAY
            elif unit in ("W", "D"):
                scale = 7 if unit == "W" else 1
                days += whole * scale
                frac_days = frac * scale
                days += int(frac_days)
                us += (frac_days - int(frac_days)) * US_PER_DAY
            else:
                us += value * {"tH": US_PER_HOUR, "tM": US_PER_MINUTE, "tS": US_PER_SECOND}[unit]
        if pos != len(part):
            return None
    return months, days, int(us.to_integral_value(ROUND_HALF_EVEN))
