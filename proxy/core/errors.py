"""Errors a caller can act on, with both their SQLSTATE and their HTTP status."""

from __future__ import annotations


class AgentError(Exception):
    """A failure a caller can act on; carries both its SQLSTATE and its HTTP status."""

    def __init__(
        self, code: str, message: str, *, sqlstate: str, http_status: int, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code  # stable machine-readable error code (REST / MCP)
        self.message = message
        self.sqlstate = sqlstate
        self.http_status = http_status
        self.hint = hint

    @classmethod
    def invalid(cls, message: str, hint: str | None = None) -> AgentError:
        return cls("invalid_argument", message, sqlstate="22023", http_status=422, hint=hint)

    @classmethod
    def not_found(cls, message: str) -> AgentError:
        # Also the answer for another agent's or org's object: never leak that it exists.
        return cls("not_found", message, sqlstate="42704", http_status=404)

    @classmethod
    def forbidden(cls, message: str) -> AgentError:
        return cls("forbidden", message, sqlstate="42501", http_status=403)

    @classmethod
    def conflict(cls, message: str) -> AgentError:
        return cls("conflict", message, sqlstate="55000", http_status=409)

    @classmethod
    def unavailable(cls, message: str, hint: str | None = None) -> AgentError:
        return cls("unavailable", message, sqlstate="58000", http_status=503, hint=hint)
