"""COMMENT ON SCHEMA, CONSTRAINT and FUNCTION, which DuckDB cannot keep (it has no comment
on a schema, keeps no constraint names of its own for most constraints, and reading its
function comments back costs a scan of all its functions, with each catalog check):
the server keeps them in its registry `main.__hati_comments`, which pg_description reads
(proxy/pgserver/object_comments.py). pg_dump writes both (`COMMENT ON SCHEMA app IS
'...'`, `COMMENT ON CONSTRAINT c ON app.t IS '...'`); `IS NULL` removes one. Also
`COMMENT ON EXTENSION`, which pg_dump writes after each CREATE EXTENSION: acknowledged
for a built-in extension (its description is the built-in one). `COMMENT ON DATABASE`
(pg_dump --create writes it): kept in the registry too, which pg_shdescription reads
(psql's `\\l+`)."""

from __future__ import annotations

import re

from transpiler.model import CommentCommand

_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_COMMENT = re.compile(
    rf"^\s*COMMENT\s+ON\s+(SCHEMA|CONSTRAINT|EXTENSION|DATABASE)\s+({_NAME})"
    rf"(?:\s+ON\s+({_NAME}(?:\s*\.\s*{_NAME})?))?"
    r"\s+IS\s+(NULL|'(?:[^']|'')*')\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_PART = re.compile(_NAME)
# COMMENT ON FUNCTION / PROCEDURE [schema.]name[(argument types)]: kept by name (a macro
# has one signature per name and number of arguments; the argument types are not checked).
_FUNCTION = re.compile(
    rf"^\s*COMMENT\s+ON\s+(?:FUNCTION|PROCEDURE|ROUTINE)\s+({_NAME}(?:\s*\.\s*{_NAME})?)"
    r"\s*(?:\([^()]*\))?\s+IS\s+(NULL|'(?:[^']|'')*')\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)


def _ident(part: str) -> str:
    """A name as PostgreSQL folds it: quoted as written, unquoted lower case."""
    if part.startswith('"'):
        return part[1:-1].replace('""', '"')
    return part.lower()


def _duck_schema(name: str) -> str:
    return "main" if name == "public" else name


def comment_command(text: str) -> CommentCommand | None:
    """The request of a COMMENT ON SCHEMA / CONSTRAINT ... ON table / FUNCTION, else None."""
    if (f := _FUNCTION.match(text)) is not None:
        parts = [_ident(p) for p in _PART.findall(f[1])]
        schema = _duck_schema(parts[0]) if len(parts) == 2 else None
        value = None if f[2].upper() == "NULL" else f[2][1:-1].replace("''", "'")
        return CommentCommand("function", schema, None, parts[-1], value)
    m = _COMMENT.match(text)
    if m is None or (m[1].upper() == "CONSTRAINT") != (m[3] is not None):
        return None
    value = None if m[4].upper() == "NULL" else m[4][1:-1].replace("''", "'")
    name = _ident(m[2])
    if m[1].upper() in ("EXTENSION", "DATABASE"):
        return CommentCommand(m[1].lower(), None, None, name, value)
    if m[3] is None:
        return CommentCommand("schema", _duck_schema(name), None, name, value)
    parts = [_ident(p) for p in _PART.findall(m[3])]
    schema = _duck_schema(parts[0]) if len(parts) == 2 else None
    return CommentCommand("constraint", schema, parts[-1], name, value)
