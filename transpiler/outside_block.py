"""Commands PostgreSQL refuses inside a transaction block (PreventInTransactionBlock):
inside BEGIN ... COMMIT, or in a message of several statements (an implicit block), they
are 25001 `<command> cannot run inside a transaction block`. Pure: reads the tokens."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot.tokens import Token


def command(tokens: Sequence[Token]) -> str | None:
    """The command's name as PostgreSQL's error says it, or None when it may run anywhere."""
    # (a command sqlglot does not parse, REINDEX, comes as one token for all its words)
    words = " ".join(t.text for t in tokens[:6]).upper().split()[:6]
    first = words[0] if words else ""
    if first == "VACUUM":
        return "VACUUM"
    if first == "REINDEX":
        if "CONCURRENTLY" in words:
            return "REINDEX CONCURRENTLY"
        if len(words) > 1 and words[1] in ("DATABASE", "SYSTEM"):
            return f"REINDEX {words[1]}"
        return None
    if first in ("CREATE", "DROP") and len(words) > 1:
        rest = words[2:] if words[1] == "UNIQUE" else words[1:]
        if rest[:2] == ["INDEX", "CONCURRENTLY"]:
            return f"{first} INDEX CONCURRENTLY"
        if rest[:1] in (["DATABASE"], ["TABLESPACE"]):
            return f"{first} {rest[0]}"
    if words[:2] == ["ALTER", "SYSTEM"]:
        return "ALTER SYSTEM"
    if words[:2] == ["ALTER", "DATABASE"] and "RENAME" in words:
        # PostgreSQL allows it in a block; a database's rename cannot be rolled back here
        return "ALTER DATABASE RENAME"
    return None
