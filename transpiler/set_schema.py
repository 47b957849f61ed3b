"""`ALTER TABLE | SEQUENCE | VIEW [IF EXISTS] name SET SCHEMA s`: DuckDB 1.5 cannot move an
object between schemas, so the server moves it (proxy/pgserver/set_schema.py). `parse`
reads the request off the statement's tokens; None for any other statement (ALTER
MATERIALIZED VIEW ... SET SCHEMA is matviews.py's). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from transpiler.constraint_tokens import alter_head, folded_name, is_name

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
    head = alter_head(sql)
    if head is None or head.kind not in _KINDS:
        return None
    tokens, words, i = head.tokens, head.words, head.end
    if words[i : i + 2] != ["SET", "SCHEMA"]:
        return None
    if i + 3 != len(tokens) or not is_name(tokens[i + 2]):
        return None
    new_schema = folded_name(tokens[i + 2])
    return SetSchema(_KINDS[head.kind], head.name, head.schema, new_schema, head.if_exists)
