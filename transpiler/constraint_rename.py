"""`ALTER TABLE [IF EXISTS] [ONLY] t RENAME CONSTRAINT a TO b` (Django's RenameIndex,
Alembic's op.execute): sqlglot knows it only as an opaque command and DuckDB 1.5 not at
all, so the server carries it out (proxy/pgserver/constraint_rename.py). `parse(sql)`
reads the request off the statement's tokens; None for any other statement. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType


@dataclass(frozen=True, slots=True)
class ConstraintRename:
    table: str
    schema: str | None
    old: str
    new: str
    if_exists: bool = False


def parse(sql: str) -> ConstraintRename | None:
    """The RENAME CONSTRAINT request of `sql`, else None (a cheap test first)."""
    if "constraint" not in sql.lower():
        return None
    try:
        tokens = [t for t in sqlglot.tokenize(sql, read="postgres")]
    except SqlglotError:
        return None
    while tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens.pop()
    words = [_word(t) for t in tokens]
    if words[:2] != ["ALTER", "TABLE"]:
        return None
    i = 2
    if_exists = words[i : i + 2] == ["IF", "EXISTS"]
    i += 2 if if_exists else 0
    if words[i : i + 1] == ["ONLY"]:
        i += 1
    names: list[str] = []
    while i < len(tokens) and _is_name(tokens[i]):
        names.append(_name(tokens[i]))
        i += 1
        if i < len(tokens) and tokens[i].token_type is TokenType.DOT:
            i += 1
        else:
            break
    if not names or len(names) > 3 or words[i : i + 2] != ["RENAME", "CONSTRAINT"]:
        return None
    rest = tokens[i + 2 :]
    if len(rest) != 3 or _word(rest[1]) != "TO" or not all(_is_name(t) for t in rest[::2]):
        return None
    schema = names[-2] if len(names) > 1 else None
    return ConstraintRename(names[-1], schema, _name(rest[0]), _name(rest[2]), if_exists)


def _word(token: Token) -> str:
    return "" if token.token_type is TokenType.IDENTIFIER else token.text.upper()


def _is_name(token: Token) -> bool:
    return token.token_type in (TokenType.VAR, TokenType.IDENTIFIER) or (
        token.text.isidentifier() and token.token_type is not TokenType.DOT
    )


def _name(token: Token) -> str:
    """An identifier as PostgreSQL folds it: quoted as written, else lower case."""
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()
