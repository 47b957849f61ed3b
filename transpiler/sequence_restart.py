"""`ALTER SEQUENCE name RESTART [[WITH] n]`: DuckDB has no ALTER SEQUENCE RESTART, and
its sequences only move forward. The statement becomes the `setval(name, n, false)` it
means (n: the sequence's start when not given), which the server carries out by making
the sequence again when it must go back (proxy/pgserver/sequence_restart.py)."""

from __future__ import annotations

import re

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_RESTART = re.compile(
    rf"^\s*ALTER\s+SEQUENCE\s+((?:{_IDENT}\s*\.\s*)?{_IDENT})\s+RESTART"
    r"(?:\s+(?:WITH\s+)?([+-]?\d+))?\s*;?\s*$",
    re.IGNORECASE,
)


def restart_sql(text: str) -> str | None:
    """The setval form of an `ALTER SEQUENCE ... RESTART`, else None."""
    m = _RESTART.match(text)
    if m is None:
        return None
    name = "'" + re.sub(r"\s*\.\s*", ".", m[1]).replace("'", "''") + "'"
    value = m[2] if m[2] is not None else f"__hati_sequence_start({name})"
    return f"SELECT setval({name}, {value}, false)"
