"""`ALTER SEQUENCE [IF EXISTS] [schema.]name RENAME TO new` (or ALTER TABLE naming the
sequence, as PostgreSQL allows): DuckDB 1.5 cannot rename a sequence ("Schema element not supported yet!"), so the server makes it again under the new
name (proxy/pgserver/sequence_rename.py). `parse` reads the request off the statement's
tokens; None for any other statement. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from transpiler.constraint_tokens import folded_name, is_name, word

_HINT = re.compile(r"^\s*ALTER\s+(?:SEQUENCE|TABLE)\b.*\bRENAME\s+TO\b", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class SequenceRename:
    name: str
    schema: str | None  # as written; None: found on the search path
    new_name: str
    if_exists: bool = False
    # written as ALTER TABLE (PostgreSQL renames any relation so; Rails' rename_table
    # renames the sequence and the primary key's index this way)
    as_table: bool = False


def parse(sql: str) -> SequenceRename | None:
    if not _HINT.search(sql):
        return None
    try:
        tokens = list(sqlglot.tokenize(sql, read="postgres"))
    except SqlglotError:
        return None
    while tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens.pop()
    words = [word(t) for t in tokens]
    as_table = words[1:2] == ["TABLE"]
    i = 2
    if_exists = words[i : i + 2] == ["IF", "EXISTS"]
    i += 2 if if_exists else 0
    if as_table and words[i : i + 1] == ["ONLY"]:
        i += 1
    names: list[str] = []
    while i < len(tokens) and is_name(tokens[i]):
        names.append(folded_name(tokens[i]))
        i += 1
        if i < len(tokens) and tokens[i].token_type is TokenType.DOT:
            i += 1
        else:
            break
    if not names or len(names) > 3 or words[i : i + 2] != ["RENAME", "TO"]:
        return None
    if i + 3 != len(tokens) or not is_name(tokens[i + 2]):
        return None
    schema = names[-2] if len(names) > 1 else None
    return SequenceRename(names[-1], schema, folded_name(tokens[i + 2]), if_exists, as_table)
