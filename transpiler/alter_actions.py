"""ALTER TABLE with several actions (`ALTER TABLE t ADD COLUMN a int, ADD COLUMN b text`:
Knex, Prisma Migrate and Rails' bulk `change_table` send them) as one ALTER TABLE per
action, in order: DuckDB takes one action a statement ("Only one ALTER command per
statement is supported"). The parts run in the query's transaction (a simple query's
statements share an implicit one), so all or nothing as in PostgreSQL, and each gets the
server's ALTER TABLE handling (constraints, rebuilds, renames) of its own. An ALTER with a column TYPE change stays whole: alter_type.py reads all
its clauses for one rebuild of the table. Over the extended protocol (`one_alter`) the
server runs the parts of one Parse's several-action ALTER TABLE at its Execute, in one
transaction (proxy/pgserver/alter_parts.py). Pure.
"""

from __future__ import annotations

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from transpiler.dialects import POSTGRES
from transpiler.splitter import Chunk, first_word, split

_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})


def split_actions(chunk: Chunk, dialect: Dialect) -> list[tuple[str, Chunk]] | None:
    """(text, chunk) of each action's own ALTER TABLE; None when there is one action."""
    tokens = chunk.tokens
    whole = None
    if first_word(tokens) != "ALTER" or first_word(tokens, 1) != "TABLE":
        return whole
    i = 2
    if first_word(tokens, i) == "IF" and first_word(tokens, i + 1) == "EXISTS":
        i += 2
    if first_word(tokens, i) == "ONLY":
        i += 1
    i += 1  # the table's name, then its other parts
    while i + 1 < len(tokens) and tokens[i].token_type is TokenType.DOT:
        i += 2
    if i < len(tokens) and tokens[i].token_type is TokenType.STAR:
        i += 1
    if i >= len(tokens):
        return whole
    starts, depth = [i], 0
    for j in range(i, len(tokens)):
        kind = tokens[j].token_type
        if kind in _OPEN:
            depth += 1
        elif kind in _CLOSE:
            depth -= 1
        elif kind is TokenType.COMMA and depth == 0:
            starts.append(j + 1)
    if len(starts) == 1 or any(_changes_type(tokens, first) for first in starts):
        return whole
    head = chunk.text[: tokens[i].start - chunk.start]
    out = []
    for n, first in enumerate(starts):
        last = starts[n + 1] - 2 if n + 1 < len(starts) else len(tokens) - 1
        if last < first:
            return whole  # an empty action (`ADD a int,`): DuckDB's error as before
        action = chunk.text[tokens[first].start - chunk.start : tokens[last].end + 1 - chunk.start]
        text = head + action
        out.extend((text, part) for part in split(text, dialect))
    return out


def one_alter(sql: str) -> bool:
    """Is `sql` one ALTER TABLE of several actions (and nothing else)?"""
    try:
        chunks = split(sql, POSTGRES)
    except TokenError:
        return False
    return len(chunks) == 1 and split_actions(chunks[0], POSTGRES) is not None


def _changes_type(tokens: list, first: int) -> bool:
    """`ALTER [COLUMN] c [SET DATA] TYPE ...` starting at tokens[first]."""
    words = [t.text.upper() for t in tokens[first : first + 6]]
    return bool(words) and words[0] == "ALTER" and "TYPE" in words
