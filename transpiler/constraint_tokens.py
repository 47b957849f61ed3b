"""ALTER TABLE forms about constraints' names that sqlglot knows only as an opaque command
and DuckDB 1.5 not at all; the server carries them out (proxy/pgserver/constraint_names.py):

- `ALTER TABLE [IF EXISTS] [ONLY] t RENAME CONSTRAINT a TO b` (Django's RenameIndex,
  Alembic): `parse(sql)`;
- `ALTER TABLE t ADD [CONSTRAINT c] UNIQUE | PRIMARY KEY USING INDEX i` (a unique index
  built CONCURRENTLY first, then attached, as Django and Rails migrations do):
  `using_index(sql)`.

Both read the request off the statement's tokens; None for any other statement. Pure.
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


@dataclass(frozen=True, slots=True)
class UsingIndex:
    table: str
    schema: str | None
    kind: str  # "u" (UNIQUE) or "p" (PRIMARY KEY)
    index: str
    name: str | None  # CONSTRAINT name; None: the index's name
    if_exists: bool = False


def parse(sql: str) -> ConstraintRename | None:
    """The RENAME CONSTRAINT request of `sql`, else None (a cheap test first)."""
    head = _head(sql, "constraint")
    if head is None:
        return None
    tokens, words, i, table, schema, if_exists = head
    if words[i : i + 2] != ["RENAME", "CONSTRAINT"]:
        return None
    rest = tokens[i + 2 :]
    if len(rest) != 3 or word(rest[1]) != "TO" or not all(is_name(t) for t in rest[::2]):
        return None
    return ConstraintRename(table, schema, folded_name(rest[0]), folded_name(rest[2]), if_exists)


def using_index(sql: str) -> UsingIndex | None:
    """The ADD ... USING INDEX request of `sql`, else None (a cheap test first)."""
    head = _head(sql, "using index")
    if head is None:
        return None
    tokens, words, i, table, schema, if_exists = head
    if words[i : i + 1] != ["ADD"]:
        return None
    i, name = i + 1, None
    if words[i : i + 1] == ["CONSTRAINT"] and i + 1 < len(tokens) and is_name(tokens[i + 1]):
        name, i = folded_name(tokens[i + 1]), i + 2
    if words[i : i + 1] == ["UNIQUE"]:
        kind, i = "u", i + 1
    elif words[i : i + 1] == ["PRIMARY KEY"]:  # one token to sqlglot
        kind, i = "p", i + 1
    elif words[i : i + 2] == ["PRIMARY", "KEY"]:
        kind, i = "p", i + 2
    else:
        return None
    if words[i : i + 2] != ["USING", "INDEX"] or i + 3 != len(tokens) or not is_name(tokens[i + 2]):
        return None  # (DEFERRABLE and the like: DuckDB's keys are never deferred)
    return UsingIndex(table, schema, kind, folded_name(tokens[i + 2]), name, if_exists)


@dataclass(frozen=True)
class AlterHead:
    """`ALTER <kind> [IF EXISTS] [ONLY] [[catalog.]schema.]name`, read off the tokens."""

    tokens: list[Token]  # without trailing semicolons
    words: list[str]
    kind: str  # TABLE, SEQUENCE, VIEW, ...
    end: int  # where the action starts
    name: str
    schema: str | None  # as written; None: found on the search path
    if_exists: bool


def alter_head(sql: str) -> AlterHead | None:
    """The head of an ALTER statement; None for another statement or an unreadable name.
    ONLY is read after ALTER TABLE alone, as PostgreSQL takes it."""
    try:
        tokens = list(sqlglot.tokenize(sql, read="postgres"))
    except SqlglotError:
        return None
    while tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens.pop()
    words = [word(t) for t in tokens]
    if len(words) < 2 or words[0] != "ALTER":
        return None
    i = 2
    if_exists = words[i : i + 2] == ["IF", "EXISTS"]
    i += 2 if if_exists else 0
    if words[1] == "TABLE" and words[i : i + 1] == ["ONLY"]:
        i += 1
    names: list[str] = []
    while i < len(tokens) and is_name(tokens[i]):
        names.append(folded_name(tokens[i]))
        i += 1
        if i < len(tokens) and tokens[i].token_type is TokenType.DOT:
            i += 1
        else:
            break
    if not names or len(names) > 3:
        return None
    schema = names[-2] if len(names) > 1 else None
    return AlterHead(tokens, words, words[1], i, names[-1], schema, if_exists)


def _head(sql: str, hint: str) -> tuple[list[Token], list[str], int, str, str | None, bool] | None:
    """`ALTER TABLE [IF EXISTS] [ONLY] [schema.]table`: the tokens, their words, where
    the action starts, the table, its schema and IF EXISTS; None for another statement."""
    if hint not in " ".join(sql.lower().split()):
        return None
    head = alter_head(sql)
    if head is None or head.kind != "TABLE":
        return None
    return head.tokens, head.words, head.end, head.name, head.schema, head.if_exists


def word(token: Token) -> str:
    return "" if token.token_type is TokenType.IDENTIFIER else token.text.upper()


def is_name(token: Token) -> bool:
    return token.token_type in (TokenType.VAR, TokenType.IDENTIFIER) or (
        token.text.isidentifier() and token.token_type is not TokenType.DOT
    )


def folded_name(token: Token) -> str:
    """An identifier as PostgreSQL folds it: quoted as written, else lower case."""
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()
