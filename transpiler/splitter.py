"""Split an input string into statements using the dialect's tokenizer.

Tokenizing once handles comments, quoted strings, dollar quotes and E'' escapes; a
statement is the run of tokens between top-level semicolons. Comments before a
statement are attached to its first token and never reach the chunk text.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from transpiler.dialects import tokenize


@dataclass(slots=True)
class Chunk:
    """One statement: its tokens and its span [start, end) in the input."""

    tokens: list[Token]
    start: int
    end: int
    text: str


def split(sql: str, dialect: Dialect) -> list[Chunk]:
    """Statements of `sql` in order; empty statements are dropped.

    Raises sqlglot's TokenError for unterminated strings / identifiers / comments.
    """
    tokens = tokenize(dialect, sql)
    if ";" not in sql:  # no SEMICOLON token can exist: one statement (or none)
        return [_chunk(sql, tokens)] if tokens else []
    chunks: list[Chunk] = []
    current: list[Token] = []
    for token in tokens:
        if token.token_type is TokenType.SEMICOLON:
            if current:
                chunks.append(_chunk(sql, current))
                current = []
        else:
            current.append(token)
    if current:
        chunks.append(_chunk(sql, current))
    return chunks


def _chunk(sql: str, tokens: list[Token]) -> Chunk:
    start = tokens[0].start
    end = tokens[-1].end + 1
    return Chunk(tokens=tokens, start=start, end=end, text=sql[start:end])


def first_word(tokens: list[Token], index: int = 0) -> str:
    """Upper-case text of tokens[index], or "" past the end."""
    return tokens[index].text.upper() if index < len(tokens) else ""
