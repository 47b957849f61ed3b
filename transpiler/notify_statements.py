"""LISTEN / UNLISTEN / NOTIFY read from tokens: (verb, channel, payload).

Channel names are identifiers: folded to lower case unless quoted, as PostgreSQL does.
NOTIFY's payload must be a string literal (PostgreSQL's grammar: `NOTIFY chan [, Sconst]`).
Pure: the server applies the result (proxy/pgserver/commands.py, notify_wire.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import Token, TokenType

_STRINGS = {TokenType.STRING, TokenType.BYTE_STRING, TokenType.HEREDOC_STRING}


@dataclass(frozen=True)
class NotifyStatement:
    verb: str  # "LISTEN" | "UNLISTEN" | "NOTIFY"
    channel: str | None  # None: UNLISTEN *
    payload: str = ""


def _channel(token: Token) -> str:
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()


def parse_notify_statement(tokens: list[Token]) -> NotifyStatement | None:
    """The statement, or None when the tokens are not a well-formed LISTEN / UNLISTEN /
    NOTIFY (the caller then reports PostgreSQL's 42601 syntax error)."""
    if len(tokens) < 2:
        return None
    verb = tokens[0].text.upper()
    rest = tokens[1:]
    if rest and rest[-1].token_type is TokenType.SEMICOLON:
        rest = rest[:-1]
    if verb == "UNLISTEN" and len(rest) == 1 and rest[0].token_type is TokenType.STAR:
        return NotifyStatement("UNLISTEN", None)
    if verb not in ("LISTEN", "UNLISTEN", "NOTIFY") or not rest:
        return None
    name = rest[0]
    if name.token_type in _STRINGS or name.token_type is TokenType.STAR:
        return None
    channel = _channel(name)
    if len(rest) == 1:
        return NotifyStatement(verb, channel)
    if (
        verb == "NOTIFY"
        and len(rest) == 3
        and rest[1].token_type is TokenType.COMMA
        and rest[2].token_type in _STRINGS
    ):
        return NotifyStatement(verb, channel, rest[2].text)
    return None


def notify_syntax_error_at(tokens: list[Token]) -> int | None:
    """The token PostgreSQL's 42601 names in a malformed LISTEN / UNLISTEN / NOTIFY
    (`syntax error at or near`), or None for `syntax error at end of input`."""
    if tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens = tokens[:-1]
    verb = tokens[0].text.upper()
    for i, token in enumerate(tokens[1:], 1):
        if i == 1:
            star = verb == "UNLISTEN" and token.token_type is TokenType.STAR
            if token.token_type in _STRINGS or (token.token_type is TokenType.STAR and not star):
                return i
        elif (
            verb != "NOTIFY"
            or i > 3
            or i == 2
            and token.token_type is not TokenType.COMMA
            or i == 3
            and token.token_type not in _STRINGS
        ):
            return i
    return None
