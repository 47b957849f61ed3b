"""`ALTER TABLE | SEQUENCE | VIEW [IF EXISTS] name SET SCHEMA s`: DuckDB 1.5 cannot move an
object between schemas, so the server moves it (proxy/pgserver/set_schema.py). `parse`
reads the request off the statement's tokens; None for any other statement (ALTER
MATERIALIZED VIEW ... SET SCHEMA is matviews.py's). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from transpiler.constraint_tokens import folded_name, is_name, word

_HINT = re.compile(r"\bSET\s+SCHEMA\b", re.IGNORECASE)
_KINDS = {"TABLE": "table", "SEQUENCE": "sequence", "VIEW": "view"}


@dataclass(frozen=True, slots=True)
class SetSchema:
    kind: str  # table (PostgreSQL takes a view's name there too), sequence, view
    name: str
    schema: str | None  # as written; None: found on the search path
    new_schema: str
    if_exists: bool = False


def parse(sql: str) -> SetSchema | None:
    if not _HINT.search(sql):
        return None
    try:
        tokens = [t for t in sqlglot.tokenize(sql, read="postgres")]
    except SqlglotError:
        return None
    while tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens.pop()
    words = [word(t) for t in tokens]
    if len(words) < 2 or words[0] != "ALTER" or words[1] not in _KINDS:
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
    if not names or len(names) > 3 or words[i : i + 2] != ["SET", "SCHEMA"]:
        return None
    if i + 3 != len(tokens) or not is_name(tokens[i + 2]):
        return None
    schema = names[-2] if len(names) > 1 else None
    return SetSchema(_KINDS[words[1]], names[-1], schema, folded_name(tokens[i + 2]), if_exists)
