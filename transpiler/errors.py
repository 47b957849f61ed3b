"""The one exception the transpiler raises."""

from __future__ import annotations


class TranspileError(Exception):
    """A statement the transpiler refuses, with what the wire layer needs for ErrorResponse.

    `sqlstate` is a Postgres SQLSTATE (42601 syntax, 42883 undefined function /
    wrong arguments, 0A000 not supported); `position` is a 1-based character
    offset into the original input string, or None when unknown; `detail` and `hint` as
    PostgreSQL words them, when it gives them.
    """

    def __init__(
        self,
        sqlstate: str,
        message: str,
        position: int | None = None,
        *,
        detail: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.position = position
        self.detail = detail
        self.hint = hint

    def __repr__(self) -> str:
        return f"TranspileError({self.sqlstate!r}, {self.message!r}, {self.position!r})"
