"""`ALTER SEQUENCE [IF EXISTS] [schema.]name RENAME TO new` (or ALTER TABLE naming the
sequence, as PostgreSQL allows): DuckDB 1.5 cannot rename a sequence ("Schema element not supported yet!"), so the server makes it again under the new
name (proxy/pgserver/sequence_rename.py). `parse` reads the request off the statement's
tokens; None for any other statement. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from transpiler.constraint_tokens import alter_head, folded_name, is_name

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
    head = alter_head(sql)
    if head is None or head.kind not in ("TABLE", "SEQUENCE"):
        return None
    tokens, words, i = head.tokens, head.words, head.end
    if words[i : i + 2] != ["RENAME", "TO"]:
        return None
    if i + 3 != len(tokens) or not is_name(tokens[i + 2]):
        return None
    new_name = folded_name(tokens[i + 2])
    as_table = head.kind == "TABLE"
    return SequenceRename(head.name, head.schema, new_name, head.if_exists, as_table)
