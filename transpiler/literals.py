"""String constants in any of their Postgres spellings: '...', E'...', $$...$$."""

from __future__ import annotations

from sqlglot import exp

# Postgres' E'...' parses as ByteString and $tag$...$tag$ as RawString; both carry
# the already-unescaped text.
_STRING_NODES = (exp.RawString, exp.ByteString)


def string_value(node: exp.Expr | None) -> str | None:
    """The text of a string constant node, else None."""
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else None
    if isinstance(node, _STRING_NODES) and isinstance(node.this, str):
        return node.this
    return None
