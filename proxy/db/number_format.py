"""PostgreSQL's to_char(number, format) for the digit patterns (`9 0 . , D G`, `FM`, and the
signs `S MI PL SG PR`), as the catalog's `__hati_to_char_number(text, format)` (the
transpiler passes the number as its text: transpiler/pg_functions.py). `EEEE`, `V`, `TH`
and `L` are 0A000."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from proxy.db.duckdb_errors import UdfError

_TOKEN = re.compile(r"FM|fm|MI|mi|PL|pl|SG|sg|PR|pr|EEEE|TH|th|[90.,DGSVL]|.", re.S)
_UNSUPPORTED = {"EEEE", "V", "TH", "th", "L"}


def to_char_number(value: str | None, fmt: str | None) -> str | None:
    if value is None or fmt is None:
        return None
    try:
        number = Decimal(value.strip())
    except InvalidOperation:
        raise UdfError("22P02", f'invalid input syntax for type numeric: "{value}"') from None
    tokens = _TOKEN.findall(fmt)
    bad = [t for t in tokens if t in _UNSUPPORTED]
    if bad:
        raise UdfError("0A000", f'to_char number pattern "{bad[0]}" is not supported')
    fill = any(t.upper() == "FM" for t in tokens)
    tokens = [t for t in tokens if t.upper() != "FM"]
    point = next((i for i, t in enumerate(tokens) if t in (".", "D")), len(tokens))
    int_slots = [i for i in range(point) if tokens[i] in ("9", "0")]
    frac_slots = [i for i in range(point + 1, len(tokens)) if tokens[i] in ("9", "0")]
    if not number.is_finite():
        raise UdfError("0A000", "to_char of NaN or Infinity is not supported")
    rounded = abs(number).quantize(Decimal(1).scaleb(-len(frac_slots)), rounding=ROUND_HALF_UP)
    negative = number < 0 and rounded != 0
    digits = f"{rounded:f}"
    int_digits, _, frac_digits = digits.partition(".")
    int_digits = int_digits.lstrip("0")
    frac_digits = frac_digits.ljust(len(frac_slots), "0")
    out = list(tokens)
    if len(int_digits) > len(int_slots):  # does not fit: PostgreSQL fills with '#'
        for i in int_slots + frac_slots:
            out[i] = "#"
        if point < len(tokens):
            out[point] = "."
        first_zero = None
        lead_end = 0
    else:
        first_zero = next((k for k, i in enumerate(int_slots) if tokens[i] == "0"), None)
        padded = int_digits.rjust(len(int_slots), " ")
        if not int_digits and not frac_slots and int_slots:
            padded = padded[:-1] + "0"  # zero with no decimals shows one 0
        shown_from = len(int_slots) - len(int_digits.rstrip(" "))
        if first_zero is not None:
            shown_from = min(shown_from, first_zero)
        if not int_digits and not frac_slots and int_slots:
            shown_from = min(shown_from, len(int_slots) - 1)
        for k, i in enumerate(int_slots):
            out[i] = (
                padded[k]
                if k >= shown_from and padded[k] != " "
                else ("0" if k >= shown_from else " ")
            )
        lead_end = int_slots[shown_from] if shown_from < len(int_slots) else point
        for k, i in enumerate(frac_slots):
            out[i] = frac_digits[k]
        if point < len(tokens):
            out[point] = "."
        if fill:  # FM: no trailing zeros in 9 positions of the fraction
            for i in reversed(frac_slots):
                if tokens[i] == "9" and out[i] == "0":
                    out[i] = ""
                else:
                    break
    for i in range(lead_end):  # group separators before the first digit are blanks
        if tokens[i] in (",", "G"):
            out[i] = " "
    for i in range(lead_end, len(tokens)):
        if tokens[i] in (",", "G"):
            out[i] = ","
    sign_tokens = [i for i, t in enumerate(tokens) if t.upper() in ("S", "MI", "PL", "SG", "PR")]
    prefix, suffix = "", ""
    for i in sign_tokens:
        t = tokens[i].upper()
        if t == "S":
            out[i] = ""
            mark = "-" if negative else "+"
            if i < lead_end or i == 0:
                prefix = mark
            else:
                out[i] = mark
        elif t == "MI":
            out[i] = "-" if negative else ("" if fill else " ")
        elif t == "PL":
            out[i] = "" if negative else "+"
            if negative:
                prefix = "-"
        elif t == "SG":
            out[i] = "-" if negative else "+"
        elif t == "PR":
            out[i] = ">" if negative else ("" if fill else " ")
            prefix = "<" if negative else ("" if fill else " ")
    if not sign_tokens:
        prefix = "-" if negative else ("" if fill else " ")
    lead = "".join(out[:lead_end])
    body = "".join(out[lead_end:])
    if fill:
        lead = lead.replace(" ", "")
    else:  # the sign sits just before the first digit, the blanks before it
        return lead + prefix + body + suffix
    return lead + prefix + body + suffix
