"""CREATE TEMP TABLE ... ON COMMIT { DROP | DELETE ROWS | PRESERVE ROWS }.

DuckDB has no ON COMMIT clause. The clause is taken out of the statement and the action
kept on it (`Statement.on_commit`); the server drops the table, or deletes its rows, when
the transaction ends (proxy/pgserver/temp_on_commit.py). PRESERVE ROWS is what a temporary
table does anyway. As in PostgreSQL, ON COMMIT on a table that is not temporary is 42P16.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from transpiler.errors import TranspileError

_TEMP = frozenset({"TEMP", "TEMPORARY"})
_ACTIONS = {("DROP",): "drop", ("DELETE", "ROWS"): "delete rows", ("PRESERVE", "ROWS"): None}


def split(tokens: list[Token], text: str, offset: int) -> tuple[str, str | None, str] | None:
    """(the statement without its ON COMMIT clause, the action or None for PRESERVE ROWS,
    the table's name as DuckDB names it) for a CREATE TABLE with one; None otherwise.
    `offset`: where `text` starts in the tokens' input."""
    words = [t.text.upper() for t in tokens]
    if not words or words[0] != "CREATE" or "COMMIT" not in words:
        return None
    try:
        table_at = words.index("TABLE")
    except ValueError:
        return None
    depth = 0
    for i, token in enumerate(tokens):
        depth += (token.token_type is TokenType.L_PAREN) - (token.token_type is TokenType.R_PAREN)
        if depth or words[i : i + 2] != ["ON", "COMMIT"]:
            continue
        for spelled, action in _ACTIONS.items():
            end = i + 2 + len(spelled)
            if tuple(words[i + 2 : end]) != spelled:
                continue
            if not _TEMP.intersection(words[1:table_at]):
                raise TranspileError(
                    "42P16", "ON COMMIT can only be used on temporary tables", token.start + 1
                )
            rest = text[: token.start - offset] + text[tokens[end - 1].end + 1 - offset :]
            return rest, action, _name(tokens, table_at + 1)
        raise TranspileError("42601", 'syntax error at or near "COMMIT"', token.start + 1)
    return None


def _name(tokens: list[Token], at: int) -> str:
    """The (last part of the) table name that starts at tokens[at] (IF NOT EXISTS skipped)."""
    if [t.text.upper() for t in tokens[at : at + 3]] == ["IF", "NOT", "EXISTS"]:
        at += 3
    while at + 2 < len(tokens) and tokens[at + 1].token_type is TokenType.DOT:
        at += 2
    token = tokens[at]
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()
