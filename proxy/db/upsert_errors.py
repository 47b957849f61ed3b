"""DuckDB's errors of INSERT ... ON CONFLICT, in PostgreSQL's words and SQLSTATEs.

Also the errors the statement's own guard raises (transpiler/upsert_guard.py: DuckDB's
error() is an InvalidInputException carrying only a message).
"""

from __future__ import annotations

import re

from proxy.wire.errors import PgError
from transpiler.upsert_guard import NULL_KEYS, SECOND_TIME

_DUPLICATES_HINT = (
    "Ensure that no rows proposed for insertion within the same command have duplicate "
    "constrained values."
)
_NO_MATCH = "there is no unique or exclusion constraint matching the ON CONFLICT specification"
# (the start of DuckDB's message) -> (SQLSTATE, PostgreSQL's message, HINT)
_ERRORS: tuple[tuple[str, str, str, str | None], ...] = (
    (SECOND_TIME, "21000", SECOND_TIME, _DUPLICATES_HINT),
    (
        "ON CONFLICT DO UPDATE can not update the same row twice",
        "21000",
        SECOND_TIME,
        _DUPLICATES_HINT,
    ),
    (
        NULL_KEYS,
        "0A000",
        NULL_KEYS,
        "DuckDB would keep only one of them: insert the rows whose key is NULL in "
        "statements of their own.",
    ),
    (
        "The specified columns as conflict target are not referenced by a UNIQUE",
        "42P10",
        _NO_MATCH,
        None,
    ),
    (
        "Conflict target has to be provided for a DO UPDATE operation",
        "42601",
        "ON CONFLICT DO UPDATE requires inference specification or constraint name",
        "For example, ON CONFLICT (column_name).",
    ),
)


_NO_COLUMN = re.compile(r'^Table "[^"]*" does not have a column with name "(.*)"$')


def upsert_error(message: str) -> PgError | None:
    """PostgreSQL's error for DuckDB's `message` (its "... Error: " prefix removed), or None."""
    if (column := _NO_COLUMN.match(message)) is not None:  # a conflict target's column
        return PgError("42703", f'column "{column[1]}" does not exist')
    if message.startswith('table "__hati_src" has '):  # the guard's names for the source's
        return PgError("42601", "INSERT has more target columns than expressions")
    for start, sqlstate, words, hint in _ERRORS:
        if message.startswith(start):
            detail = None if words == message else f"DuckDB: {message}"
            return PgError(sqlstate, words, detail=detail, hint=hint)
    return None
