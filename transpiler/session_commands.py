"""Session-level statements the server answers itself: SET, RESET, SHOW, transaction
control and utilities (DISCARD, CLOSE, LISTEN, UNLISTEN, DEALLOCATE, LOCK).

Parsed from tokens by hand: sqlglot turns most of these into opaque Commands, and
they are the hottest statements of a pooled driver (asyncpg's reset query).
"""

from __future__ import annotations

import re

from sqlglot.tokens import Token, TokenType

from transpiler.dialects import POSTGRES, tokenize
from transpiler.model import (
    Command,
    ResetCommand,
    SetCommand,
    ShowCommand,
    TransactionCommand,
    UtilityCommand,
)

SESSION_WORDS = frozenset(
    {
        "CREATE",  # only CREATE EXTENSION is answered here
        "DROP",  # only DROP EXTENSION
        "SET",
        "RESET",
        "SHOW",
        "BEGIN",
        "START",
        "COMMIT",
        "END",
        "ROLLBACK",
        "ABORT",
        "SAVEPOINT",
        "RELEASE",
        "DISCARD",
        "CLOSE",
        "LISTEN",
        "UNLISTEN",
        "DEALLOCATE",
        "LOCK",
        "REINDEX",
        "CLUSTER",
    }
)
_TX_NOISE = {"WORK", "TRANSACTION"}
_QUOTED_NAMES = {TokenType.IDENTIFIER, TokenType.STRING}
_STRINGS = {TokenType.STRING, TokenType.BYTE_STRING, TokenType.HEREDOC_STRING}


class SessionParse:
    """Result of parsing one session statement."""

    __slots__ = ("kind", "tag", "command", "sql")

    def __init__(self, kind: str, tag: str, command: Command | None, sql: str) -> None:
        self.kind, self.tag, self.command, self.sql = kind, tag, command, sql


def parse_session(tokens: list[Token], text: str) -> SessionParse | None:
    """Parse a session statement, or None when `tokens` is not one we answer.

    A SET we cannot read (e.g. DuckDB's `SET VARIABLE x = 1`) returns kind "set" with
    command None: the server then runs the text on DuckDB.
    """
    head = tokens[0].text.upper()
    if head not in SESSION_WORDS:
        return None
    if head == "CREATE":
        if len(tokens) < 3 or tokens[1].text.upper() != "EXTENSION":
            return None
        return _create_extension(tokens, text)
    if head == "DROP":
        if len(tokens) < 3 or tokens[1].text.upper() != "EXTENSION":
            return None
        return _drop_extension(tokens, text)
    words = [t.text.upper() for t in tokens]
    if head == "SET" and words[1:2] == ["CONSTRAINTS"]:
        # SET CONSTRAINTS {ALL | name [, ...]} {IMMEDIATE | DEFERRED}: the server's
        # foreign keys (proxy/pgserver/foreign_keys.py); "set constraints a, b deferred"
        names = ", ".join(
            t.text.strip('"') for t in tokens[2:-1] if t.token_type is not TokenType.COMMA
        )
        command = UtilityCommand(
            f"set constraints {names.lower() if names.upper() == 'ALL' else names} {words[-1].lower()}"
        )
        return SessionParse("utility", "SET CONSTRAINTS", command, text)
    if head == "SET":
        return SessionParse("set", "SET", _parse_set(tokens, words), text)
    if head == "RESET":
        # RESET is a "command" token: the tokenizer hands back the rest as one string.
        rest = text[len(tokens[0].text) :].strip()
        name = None if rest.upper() == "ALL" else rest.lower().strip('"')
        return SessionParse("reset", "RESET", ResetCommand(name), text)
    if head == "SHOW":
        return SessionParse(
            "show", "SHOW", ShowCommand(_show_name(text[len(tokens[0].text) :])), text
        )
    if head in ("DISCARD", "CLOSE", "LISTEN", "UNLISTEN", "DEALLOCATE"):
        return _utility(tokens, words, text)
    if head == "LOCK":
        return _lock(tokens, words, text)
    if head in ("REINDEX", "CLUSTER"):
        return _storage(tokens, words, text)
    return _transaction(tokens, words, text)


def _parse_set(tokens: list[Token], words: list[str]) -> SetCommand | None:
    i, local = 1, False
    if i < len(words) and words[i] in ("SESSION", "LOCAL", "GLOBAL"):
        local = words[i] == "LOCAL"
        i += 1
    rest, rest_words = tokens[i:], words[i:]
    if not rest:
        return None
    if rest_words[:2] == ["TIME", "ZONE"]:
        value_tokens = rest[2:]
        if [w.upper() for w in rest_words[2:]] in (["LOCAL"], ["DEFAULT"]):
            return SetCommand("timezone", None, local)
        interval = _interval_hours(value_tokens)
        if interval is not None:
            return SetCommand("timezone", interval, local)
        return SetCommand("timezone", _value(value_tokens), local)
    if rest_words[0] == "NAMES":
        return SetCommand("client_encoding", _value(rest[1:]) if rest[1:] else None, local)
    if rest_words[:3] == ["CHARACTERISTICS", "AS", "TRANSACTION"]:
        return SetCommand("transaction_characteristics", _options(rest[3:]), False)
    if rest_words[0] == "TRANSACTION":
        return SetCommand("transaction_characteristics", _options(rest[1:]), True)
    for j, token in enumerate(rest):
        if token.token_type is TokenType.EQ or (token.text.upper() == "TO" and j > 0):
            name = _name(rest[:j])
            if name is None or j + 1 >= len(rest):
                return None
            if [w for w in rest_words[j + 1 :]] == ["DEFAULT"]:
                return SetCommand(name, None, local)
            return SetCommand(name, _value(rest[j + 1 :]), local)
    return None


_OFFSET = re.compile(r"^\s*([+-]?)(\d{1,2})(?::(\d{2}))?\s*$")


def _interval_hours(tokens: list[Token]) -> str | None:
    """`SET TIME ZONE INTERVAL '-07:00' HOUR TO MINUTE` (Sequelize sends it): the offset
    east of UTC in hours ("-7"), as a bare number sets it; None for other values."""
    if (
        len(tokens) < 2
        or tokens[0].text.upper() != "INTERVAL"
        or tokens[1].token_type not in _STRINGS
    ):
        return None
    m = _OFFSET.match(tokens[1].text)
    if m is None:
        return None
    hours = int(m[2]) + int(m[3] or 0) / 60
    return f"{'-' if m[1] == '-' else ''}{hours:g}"


def _name(tokens: list[Token]) -> str | None:
    """A (possibly dotted) setting name, lower-cased; None if not a plain name."""
    parts: list[str] = []
    for k, token in enumerate(tokens):
        if k % 2 == 1:
            if token.token_type is not TokenType.DOT:
                return None
            continue
        if token.token_type in _STRINGS or token.token_type is TokenType.NUMBER:
            return None
        parts.append(token.text.lower())
    if not parts or len(tokens) % 2 == 0:
        return None
    return ".".join(parts)


def _value(tokens: list[Token]) -> str:
    """Unquoted value text: strings as written inside the quotes, unquoted words
    lower-cased (Postgres folds them), list items joined with ", "."""
    items: list[str] = []
    current = ""
    for token in tokens:
        tt = token.token_type
        if tt is TokenType.COMMA:
            items.append(current)
            current = ""
        elif (
            tt in _STRINGS
            or tt is TokenType.IDENTIFIER
            or tt is TokenType.NUMBER
            or tt in (TokenType.DASH, TokenType.PLUS, TokenType.DOT)
        ):
            current += token.text
        else:
            current += token.text.lower()
    items.append(current)
    return ", ".join(items)


def _options(tokens: list[Token]) -> str:
    return " ".join(t.text.lower() for t in tokens if t.token_type is not TokenType.COMMA)


_SHOW_ALIASES = {"time zone": "timezone", "transaction isolation level": "transaction_isolation"}


def _show_name(rest: str) -> str:
    # SHOW is a "command" token too: the rest of the statement arrives as one string.
    name = " ".join(rest.split()).lower().replace('"', "")
    return _SHOW_ALIASES.get(name, name)


def _utility(tokens: list[Token], words: list[str], text: str) -> SessionParse:
    head = words[0]
    rest = [t.text if t.token_type is TokenType.IDENTIFIER else t.text.lower() for t in tokens[1:]]
    if head == "DEALLOCATE" and rest[:1] == ["prepare"]:
        rest = rest[1:]
    name = " ".join([head.lower(), *rest])
    if head == "DISCARD":
        tag = f"DISCARD {words[1]}" if len(words) > 1 else "DISCARD"
    elif head == "CLOSE":
        tag = "CLOSE CURSOR ALL" if rest == ["all"] else "CLOSE CURSOR"
    elif head == "DEALLOCATE":
        tag = "DEALLOCATE ALL" if rest == ["all"] else "DEALLOCATE"
    else:
        tag = head
    return SessionParse("utility", tag, UtilityCommand(name), text)


def _storage(tokens: list[Token], words: list[str], text: str) -> SessionParse:
    """`REINDEX [(opts)] {INDEX | TABLE | SCHEMA | DATABASE | SYSTEM} [CONCURRENTLY] name` and
    `CLUSTER [VERBOSE] [table [USING index]]`: UtilityCommand "reindex <name>" / "cluster
    <name>" (a relation for the server to find: transpiler/maintenance.py says why nothing
    else is done), or the bare verb."""
    if len(tokens) == 2 and tokens[1].token_type is TokenType.STRING:
        # REINDEX is a "command" token: the tokenizer hands back the rest as one string.
        tokens = [tokens[0], *tokenize(POSTGRES, tokens[1].text)]
        words = [t.text.upper() for t in tokens]
    head, i = words[0], 1
    if i < len(tokens) and tokens[i].token_type is TokenType.L_PAREN:
        while i < len(tokens) and tokens[i].token_type is not TokenType.R_PAREN:
            i += 1
        i += 1
    relation_kind = True
    if head == "REINDEX" and i < len(words):
        relation_kind = words[i] in ("INDEX", "TABLE")
        i += 1
    while i < len(words) and words[i] in ("CONCURRENTLY", "VERBOSE"):
        i += 1
    end = next((j for j in range(i, len(words)) if words[j] == "USING"), len(words))
    name = "".join(
        t.text if t.token_type is not TokenType.IDENTIFIER else f'"{t.text}"' for t in tokens[i:end]
    )
    command = f"{head.lower()} {name}" if name and relation_kind else head.lower()
    return SessionParse("utility", head, UtilityCommand(command), text)


def _lock(tokens: list[Token], words: list[str], text: str) -> SessionParse:
    """`LOCK [TABLE] [ONLY] name [*] [, ...] [IN mode MODE] [NOWAIT]`: UtilityCommand
    "lock <name>, <name>", each name as written (quoted parts keep their quotes), for the
    server to check the tables exist."""
    if len(tokens) == 2 and tokens[1].token_type is TokenType.STRING:
        # LOCK is a "command" token: the tokenizer hands back the rest as one string.
        tokens = [tokens[0], *tokenize(POSTGRES, tokens[1].text)]
        words = [t.text.upper() for t in tokens]
    i = 1
    while i < len(words) and words[i] in ("TABLE", "ONLY"):
        i += 1
    names: list[str] = []
    current = ""
    for token, word in zip(tokens[i:], words[i:], strict=True):
        if word in ("IN", "NOWAIT"):
            break
        if token.token_type is TokenType.COMMA:
            names.append(current)
            current = ""
        elif token.token_type is TokenType.IDENTIFIER:
            current += '"' + token.text.replace('"', '""') + '"'
        elif token.token_type is not TokenType.STAR:
            current += token.text
    names.append(current)
    return SessionParse("utility", "LOCK TABLE", UtilityCommand("lock " + ", ".join(names)), text)


def _create_extension(tokens: list[Token], text: str) -> SessionParse:
    """`CREATE EXTENSION [IF NOT EXISTS] name [WITH] [SCHEMA s] [VERSION v] [CASCADE]`: the
    server says whether it has that extension built in (UtilityCommand "create extension
    <name>")."""
    rest = tokens[2:]
    if [t.text.upper() for t in rest[:3]] == ["IF", "NOT", "EXISTS"]:
        rest = rest[3:]
    if not rest:
        return SessionParse("utility", "CREATE EXTENSION", UtilityCommand("create extension"), text)
    first = rest[0]
    name = first.text if first.token_type in _QUOTED_NAMES else first.text.lower()
    return SessionParse(
        "utility", "CREATE EXTENSION", UtilityCommand(f"create extension {name}"), text
    )


def _drop_extension(tokens: list[Token], text: str) -> SessionParse:
    """`DROP EXTENSION [IF EXISTS] name [, ...] [CASCADE | RESTRICT]` (ActiveRecord's
    disable_extension): UtilityCommand "drop extension [if exists ]<name>, <name>"."""
    rest = tokens[2:]
    if_exists = [t.text.upper() for t in rest[:2]] == ["IF", "EXISTS"]
    names = [
        t.text if t.token_type in _QUOTED_NAMES else t.text.lower()
        for t in (rest[2:] if if_exists else rest)
        if t.token_type is not TokenType.COMMA and t.text.upper() not in ("CASCADE", "RESTRICT")
    ]
    command = f"drop extension {'if exists ' if if_exists else ''}{', '.join(names)}"
    return SessionParse("utility", "DROP EXTENSION", UtilityCommand(command), text)


def _transaction(tokens: list[Token], words: list[str], text: str) -> SessionParse | None:
    head = words[0]
    if head == "START":
        if words[1:2] != ["TRANSACTION"]:
            return None
        cmd = TransactionCommand("begin", _options(tokens[2:]))
        return SessionParse("begin", "START TRANSACTION", cmd, "BEGIN TRANSACTION")
    if len(tokens) == 2 and tokens[1].token_type is TokenType.STRING:
        # LOCK is a "command" token: the tokenizer hands back the rest as one string.
        tokens = [tokens[0], *tokenize(POSTGRES, tokens[1].text)]
        words = [t.text.upper() for t in tokens]
    i = 1
    while i < len(words) and words[i] in _TX_NOISE:
        i += 1
    if head == "BEGIN":
        cmd = TransactionCommand("begin", _options(tokens[i:]))
        return SessionParse("begin", "BEGIN", cmd, "BEGIN TRANSACTION")
    if head in ("COMMIT", "END"):
        return SessionParse(
            "commit", "COMMIT", TransactionCommand("commit", _options(tokens[i:])), "COMMIT"
        )
    if head in ("ROLLBACK", "ABORT"):
        if i < len(words) and words[i] == "TO":
            i += 1
            if i < len(words) and words[i] == "SAVEPOINT":
                i += 1
            cmd = TransactionCommand("rollback_to", "", _ident(tokens, i))
            return SessionParse("savepoint", "ROLLBACK", cmd, text)
        cmd = TransactionCommand("rollback", _options(tokens[i:]))
        return SessionParse("rollback", "ROLLBACK", cmd, "ROLLBACK")
    if head == "SAVEPOINT":
        cmd = TransactionCommand("savepoint", "", _ident(tokens, 1))
        return SessionParse("savepoint", "SAVEPOINT", cmd, text)
    # RELEASE [SAVEPOINT] name
    j = 2 if words[1:2] == ["SAVEPOINT"] else 1
    return SessionParse(
        "savepoint", "RELEASE", TransactionCommand("release", "", _ident(tokens, j)), text
    )


def _ident(tokens: list[Token], i: int) -> str | None:
    if i >= len(tokens):
        return None
    token = tokens[i]
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()
