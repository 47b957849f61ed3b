"""ALTER TABLE with several actions (`ALTER TABLE t ADD COLUMN a int, ADD COLUMN b text`:
Knex, Prisma Migrate and Rails' bulk `change_table` send them) as one ALTER TABLE per
action, in order: DuckDB takes one action a statement ("Only one ALTER command per
statement is supported"). The parts run in the query's transaction (a simple query's
statements share an implicit one), so all or nothing as in PostgreSQL, and each gets the
server's ALTER TABLE handling (constraints, rebuilds, renames) of its own. Over the
extended protocol one Parse holds one statement: the parts share their Statement.source,
and proxy/pgserver/statement_parts.py runs them for one Execute. An ALTER with a column TYPE change stays whole: alter_type.py reads all
its clauses for one rebuild of the table. `RENAME a TO b`, PostgreSQL's RENAME COLUMN
without its COLUMN word (Alembic's alter_column(new_column_name=...) sends it; ALTER VIEW too), gets the
word: sqlglot reads it as a table rename. Pure.
"""

from __future__ import annotations

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from transpiler.splitter import Chunk, first_word, split

_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})


def split_actions(chunk: Chunk, dialect: Dialect) -> list[tuple[str, Chunk]] | None:
    """(text, chunk) of each action's own ALTER TABLE; None when there is one action."""
    tokens = chunk.tokens
    whole = None
    if first_word(tokens) != "ALTER" or first_word(tokens, 1) not in ("TABLE", "VIEW"):
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
    bare = [first for first in starts if _bare_rename(tokens, first)]
    if (len(starts) == 1 and not bare) or any(_changes_type(tokens, f) for f in starts):
        return whole
    if first_word(tokens, 1) == "VIEW" and (len(starts) != 1 or not bare):
        return whole  # (a view takes one action; only its RENAME a TO b is read here)
    head = chunk.text[: tokens[i].start - chunk.start]
    out = []
    for n, first in enumerate(starts):
        last = starts[n + 1] - 2 if n + 1 < len(starts) else len(tokens) - 1
        if last < first:
            return whole  # an empty action (`ADD a int,`): DuckDB's error as before
        action = chunk.text[tokens[first].start - chunk.start : tokens[last].end + 1 - chunk.start]
        if first in bare:  # RENAME a TO b: RENAME COLUMN a TO b
            action = "RENAME COLUMN " + action[len(tokens[first].text) :].lstrip()
        text = head + action
        out.extend((text, part) for part in split(text, dialect))
    return out


def _changes_type(tokens: list, first: int) -> bool:
    """`ALTER [COLUMN] c [SET DATA] TYPE ...` starting at tokens[first]."""
    words = [t.text.upper() for t in tokens[first : first + 6]]
    return bool(words) and words[0] == "ALTER" and "TYPE" in words


def _bare_rename(tokens: list, first: int) -> bool:
    """`RENAME a TO b` (no COLUMN / CONSTRAINT word) starting at tokens[first]."""
    words = [t.text.upper() for t in tokens[first : first + 3]]
    return (
        len(words) == 3
        and words[0] == "RENAME"
        and words[1] not in ("COLUMN", "CONSTRAINT", "TO")
        and words[2] == "TO"
        and (
            first + 4 >= len(tokens)
            or tokens[first + 4].token_type in (TokenType.COMMA, TokenType.SEMICOLON)
        )
    )
