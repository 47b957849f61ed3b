"""The one exception the transpiler raises."""

from __future__ import annotations

from sqlglot.errors import ParseError


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


def syntax_error(sql: str, err: ParseError) -> TranspileError:
    """42601 for sqlglot's parse error, at its place in `sql`."""
    return TranspileError("42601", _parse_message(err), _error_position(sql, err))


def _parse_message(err: ParseError) -> str:
    first = err.errors[0] if err.errors else {}
    desc = first.get("description") or str(err)
    return f"syntax error: {desc}".split(". Line")[0]


def _error_position(sql: str, err: ParseError) -> int | None:
    if not err.errors:
        return None
    first = err.errors[0]
    line, col = first.get("line"), first.get("col")
    if not line or not col:
        return None
    lines = sql.split("\n")
    offset = sum(len(x) + 1 for x in lines[: line - 1]) + col
    highlight = first.get("highlight") or ""
    return max(1, offset - len(highlight) + 1)
