"""SQL-level PREPARE / EXECUTE (as pg_dump sends them): pure text work.

`PREPARE name [(type, ...)] AS statement` is kept by the server as text; `EXECUTE name
[(arg, ...)]` becomes that statement with each `$n` replaced by its argument, cast to the
declared type, and is then transpiled like any statement. (DuckDB's own PREPARE takes no
types and would see the statement untranspiled.)
"""

from __future__ import annotations

import re

from sqlglot.errors import TokenError

from transpiler.dialects import POSTGRES
from transpiler.splitter import first_word, split

_PREPARE = re.compile(
    r'^\s*PREPARE\s+("(?:[^"]|"")+"|[A-Za-z_]\w*)\s*(\((.*?)\))?\s*AS\s+(.*?);?\s*$',
    re.IGNORECASE | re.DOTALL,
)
_EXECUTE = re.compile(
    r'^\s*EXECUTE\s+("(?:[^"]|"")+"|[A-Za-z_]\w*)\s*(?:\((.*)\))?\s*;?\s*$',
    re.IGNORECASE | re.DOTALL,
)
# String literals and quoted identifiers, which $n inside must not be replaced in.
_QUOTED = re.compile(r"""[Ee]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*"|\$\d+""")


def _name(raw: str) -> str:
    return raw[1:-1].replace('""', '"') if raw.startswith('"') else raw.lower()


def split_top_level(text: str) -> list[str]:
    """Comma-separated items, ignoring commas inside parentheses and quotes."""
    items, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "'\"":
            end = text.find(ch, i + 1)
            while end != -1 and text[end + 1 : end + 2] == ch:
                end = text.find(ch, end + 2)
            i = len(text) if end == -1 else end + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
        i += 1
    last = text[start:].strip()
    if last or items:
        items.append(last)
    return items


def _one_statement(sql: str) -> bool:
    """No `;` outside quotes except a trailing one (several statements go to DuckDB)."""
    return ";" not in _QUOTED.sub("", sql).rstrip().rstrip(";")


def parse_prepare(sql: str) -> tuple[str, list[str], str] | None:
    """(name, declared types, statement text) of a PREPARE, else None."""
    if not _one_statement(sql):
        return None
    m = _PREPARE.match(sql)
    if m is None:
        return None
    return _name(m[1]), split_top_level(m[3] or ""), m[4]


def parse_execute(sql: str) -> tuple[str, list[str]] | None:
    """(name, argument expressions) of an EXECUTE, else None."""
    if not _one_statement(sql):
        return None
    m = _EXECUTE.match(sql)
    if m is None:
        return None
    return _name(m[1]), split_top_level(m[2] or "")


def bind_text(body: str, types: list[str], args: list[str]) -> str:
    """The statement with `$n` replaced by `CAST((arg n) AS type n)` outside quotes."""

    def sub(m: re.Match[str]) -> str:
        text = m.group(0)
        if not text.startswith("$"):
            return text
        n = int(text[1:])
        if not 0 < n <= len(args):
            return text  # the caller checks the count
        arg = args[n - 1]
        if n <= len(types) and types[n - 1]:
            return f"CAST(({arg}) AS {types[n - 1]})"
        return f"({arg})"

    return _QUOTED.sub(sub, body)


def max_param(body: str) -> int:
    numbers = [int(m[1:]) for m in _QUOTED.findall(body) if m.startswith("$")]
    return max(numbers, default=0)


_BLOCK_WORDS = ("BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT")


def message_pieces(sql: str) -> tuple[list[tuple[int, str]], bool] | None:
    """A simple Query's statements one by one (where each starts, its text) when there are
    several and one is a PREPARE or EXECUTE (which the server, not DuckDB, runs), and
    whether the message may run in one implicit transaction (it names no BEGIN / COMMIT /
    ROLLBACK); else None (also when it does not tokenize: the whole message then errs)."""
    if ";" not in _QUOTED.sub("", sql).rstrip().rstrip(";"):
        return None
    head = sql.upper()
    if "PREPARE" not in head and "EXECUTE" not in head:
        return None
    try:
        chunks = split(sql, POSTGRES)
    except TokenError:
        return None
    words = [first_word(c.tokens) for c in chunks]
    if len(chunks) < 2 or not ({"PREPARE", "EXECUTE"} & set(words)):
        return None
    return [(c.start, c.text) for c in chunks], not (set(_BLOCK_WORDS) & set(words))
