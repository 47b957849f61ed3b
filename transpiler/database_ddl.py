"""CREATE DATABASE / DROP DATABASE, read into what the server does (proxy/pgserver/databases.py).

A server keeps several users' databases (proxy/db/databases.py); these statements make
and remove them. Pure: reads the statement's text. PostgreSQL 15's grammar:

    CREATE DATABASE name [ [ WITH ] option [=] value [ ... ] ]
    DROP DATABASE [ IF EXISTS ] name [ [ WITH ] ( FORCE [, ...] ) ]
    ALTER DATABASE name RENAME TO new_name

(`ALTER DATABASE name OWNER TO role` is pg_dump's, acknowledged as its other OWNER TO
lines: transpiler/dump_ddl.py.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from transpiler.errors import TranspileError

# A word, a quoted name, a string, a number, or one punctuation character.
_TOKEN = re.compile(r"""\s*("(?:[^"]|"")*"|'(?:[^']|'')*'|[A-Za-z_][A-Za-z0-9_$]*|-?\d+|\S)""")
# CREATE DATABASE's options (PostgreSQL 15, and 16's ICU_RULES); CONNECTION LIMIT is two words.
_OPTIONS = frozenset(
    {
        "OWNER",
        "TEMPLATE",
        "ENCODING",
        "STRATEGY",
        "LOCALE",
        "LC_COLLATE",
        "LC_CTYPE",
        "ICU_LOCALE",
        "ICU_RULES",
        "LOCALE_PROVIDER",
        "COLLATION_VERSION",
        "TABLESPACE",
        "ALLOW_CONNECTIONS",
        "CONNECTION_LIMIT",
        "IS_TEMPLATE",
        "OID",
    }
)


@dataclass(frozen=True, slots=True)
class DatabaseDdl:
    action: str  # "create", "drop" or "rename"
    name: str
    template: str | None = None  # CREATE ... TEMPLATE (None: template1's, an empty one)
    encoding: str | None = None  # CREATE ... ENCODING as written (upper case)
    if_exists: bool = False  # DROP DATABASE IF EXISTS
    force: bool = False  # DROP DATABASE ... WITH (FORCE)
    new_name: str | None = None  # ALTER DATABASE ... RENAME TO


def is_database_ddl(words: list[str]) -> bool:
    """`words`: the statement's first two words, upper case."""
    return words[:1] in (["CREATE"], ["DROP"], ["ALTER"]) and words[1:2] == ["DATABASE"]


def _tokens(text: str) -> list[str]:
    body = text.strip().rstrip(";").strip()
    out, pos = [], 0
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if m is None:
            break
        out.append(m[1])
        pos = m.end()
    return out


def _name(token: str | None, position: int) -> str:
    """An identifier as PostgreSQL folds it: quoted kept, bare in lower case."""
    if token is None or not (token[0] == '"' or token[0].isalpha() or token[0] == "_"):
        raise TranspileError(
            "42601", f'syntax error at or near "{token or "end of input"}"', position
        )
    if token[0] == '"':
        name = token[1:-1].replace('""', '"')
        if not name:
            raise TranspileError("42601", "zero-length delimited identifier", position)
        return name
    return token.lower()


def _value(token: str) -> str:
    """An option's value: a string's text, a name, a number or DEFAULT."""
    if token[0] == "'":
        return token[1:-1].replace("''", "'")
    if token[0] == '"':
        return token[1:-1].replace('""', '"')
    return token


def parse(text: str, start: int = 0) -> DatabaseDdl:
    """The statement's meaning; 42601 for what PostgreSQL's grammar refuses."""
    toks = _tokens(text)
    where = start + 1
    head = toks[0].upper() if toks else ""
    if head == "CREATE":
        return _create(toks[2:], where)
    if head == "ALTER":
        return _alter(toks[2:], where)
    return _drop(toks[2:], where)


def _alter(toks: list[str], where: int) -> DatabaseDdl:
    name = _name(toks[0] if toks else None, where)
    rest = [t.upper() for t in toks[1:]]
    if rest[:2] == ["RENAME", "TO"] and len(toks) == 4:
        return DatabaseDdl("rename", name, new_name=_name(toks[3], where))
    what = " ".join(rest[:1]) or "without an action"
    raise TranspileError(
        "0A000",
        f"ALTER DATABASE {what} is not supported: hatiproxy keeps no per-database settings "
        "or limits (set a setting per session with SET, or in the connection's options).",
        where,
    )


def _create(toks: list[str], where: int) -> DatabaseDdl:
    name = _name(toks[0] if toks else None, where)
    rest = toks[1:]
    if rest[:1] and rest[0].upper() == "WITH":
        rest = rest[1:]
    options: dict[str, str] = {}
    while rest:
        word = rest.pop(0).upper()
        if word == "CONNECTION" and rest[:1] and rest[0].upper() == "LIMIT":
            rest.pop(0)
            word = "CONNECTION_LIMIT"
        if word not in _OPTIONS:
            raise TranspileError("42601", f'option "{word.lower()}" not recognized', where)
        if rest[:1] == ["="]:
            rest.pop(0)
        if not rest:
            raise TranspileError("42601", "syntax error at end of input", where)
        if word in options:
            raise TranspileError("42601", "conflicting or redundant options", where)
        options[word] = rest.pop(0)
    template = options.get("TEMPLATE")
    if template is not None:  # a name (a string is taken as one too, as PostgreSQL does)
        template = None if template.upper() == "DEFAULT" else _name(_quoted(template), where)
    encoding = options.get("ENCODING")
    return DatabaseDdl(
        "create",
        name,
        template=template,
        encoding=None if encoding is None else _value(encoding).upper(),
    )


def _quoted(token: str) -> str:
    """A string token as the quoted name it stands for."""
    if token[0] != "'":
        return token
    return '"' + _value(token).replace('"', '""') + '"'


def _drop(toks: list[str], where: int) -> DatabaseDdl:
    if_exists = [t.upper() for t in toks[:2]] == ["IF", "EXISTS"]
    if if_exists:
        toks = toks[2:]
    name = _name(toks[0] if toks else None, where)
    rest = [t.upper() for t in toks[1:]]
    if rest[:1] == ["WITH"]:
        rest = rest[1:]
    force = False
    if rest:
        if rest[0] != "(" or rest[-1] != ")":
            raise TranspileError("42601", f'syntax error at or near "{toks[1]}"', where)
        for option in " ".join(rest[1:-1]).split(","):
            if option.strip() != "FORCE":
                raise TranspileError(
                    "42601", f'unrecognized DROP DATABASE option "{option.strip().lower()}"', where
                )
            force = True
    return DatabaseDdl("drop", name, if_exists=if_exists, force=force)
