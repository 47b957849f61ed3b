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
    ) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.severity = severity
        self.detail = detail
        self.hint = hint
        self.position = position

    def fields(self) -> dict[str, str]:
        out = {"S": self.severity, "V": self.severity, "C": self.sqlstate, "M": self.message}
        if self.detail:
            out["D"] = self.detail
        if self.hint:
            out["H"] = self.hint
        if self.position:
            out["P"] = str(self.position)
        return out


class ProtocolViolation(PgError):
    """Malformed input from the client: answered once, then the connection is closed."""

    def __init__(self, message: str, *, sqlstate: str = "08P01") -> None:
        super().__init__(sqlstate, message, severity="FATAL")


class FatalError(PgError):
    """An error after which the connection is closed (auth failures, limits)."""

    def __init__(self, sqlstate: str, message: str, **kw: object) -> None:
        super().__init__(sqlstate, message, severity="FATAL", **kw)  # type: ignore[arg-type]
