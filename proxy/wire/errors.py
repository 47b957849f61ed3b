"""Errors as the client sees them: a SQLSTATE, a message, and optional detail."""

from __future__ import annotations


class PgError(Exception):
    """An error to send as an ErrorResponse; the session survives it."""

    def __init__(
        self,
        sqlstate: str,
        message: str,
        *,
        severity: str = "ERROR",
        detail: str | None = None,
        hint: str | None = None,
        position: int | None = None,
        where: str | None = None,
    ) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.severity = severity
        self.detail = detail
        self.hint = hint
        self.position = position
        self.where = where
        # the object a constraint violation is about (ErrorResponse fields s, t, n)
        self.schema_name: str | None = None
        self.table_name: str | None = None
        self.column_name: str | None = None
        self.constraint_name: str | None = None
        self.column_name: str | None = None

    def fields(self) -> dict[str, str]:
        out = {"S": self.severity, "V": self.severity, "C": self.sqlstate, "M": self.message}
        if self.detail:
            out["D"] = self.detail
        if self.hint:
            out["H"] = self.hint
        if self.position:
            out["P"] = str(self.position)
        if self.where:
            out["W"] = self.where
        for code, value in (
            ("s", self.schema_name),
            ("t", self.table_name),
            ("c", self.column_name),
            ("n", self.constraint_name),
        ):
            if value:
                out[code] = value
        return out


class ProtocolViolation(PgError):
    """Malformed input from the client: answered once, then the connection is closed."""

    def __init__(self, message: str, *, sqlstate: str = "08P01", detail: str | None = None) -> None:
        super().__init__(sqlstate, message, severity="FATAL", detail=detail)


class FatalError(PgError):
    """An error after which the connection is closed (auth failures, limits)."""

    def __init__(self, sqlstate: str, message: str, **kw: object) -> None:
        super().__init__(sqlstate, message, severity="FATAL", **kw)  # type: ignore[arg-type]


def _utf8_sequence_length(lead: int) -> int:
    """pg_utf_mblen: the length a lead byte announces (1 for bytes that lead nothing)."""
    if lead < 0x80:
        return 1
    if lead & 0xE0 == 0xC0:
        return 2
    if lead & 0xF0 == 0xE0:
        return 3
    return 4 if lead & 0xF8 == 0xF0 else 1


def invalid_utf8(raw: bytes, start: int) -> str:
    """Postgres's message for bad UTF-8 at `start`: the offending sequence's bytes in hex."""
    bad = raw[start : start + _utf8_sequence_length(raw[start])]
    return 'invalid byte sequence for encoding "UTF8": ' + " ".join(f"0x{b:02x}" for b in bad)
