"""PostgreSQL's VACUUM / ANALYZE forms in DuckDB's grammar, and REINDEX / CLUSTER.

DuckDB takes `VACUUM [ANALYZE] [table [(columns)]]` and `ANALYZE [table]`: one table, no
options. PostgreSQL's VERBOSE, FULL, FREEZE and the parenthesised options (`VACUUM
(VERBOSE, ANALYZE) t`) were a 0A000, several tables a syntax error. The options change
how PostgreSQL reclaims space, which DuckDB does its own way: they are dropped, ANALYZE
kept. Several tables become the whole database's VACUUM / ANALYZE (the same work, and
more).

REINDEX and CLUSTER rebuild or reorder storage PostgreSQL keeps apart from the table;
DuckDB's indexes are maintained with every write and its tables have no physical order,
so both are acknowledged (the server checks a named table or index exists, see
proxy/pgserver/commands.py) and change nothing.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from transpiler.dialects import POSTGRES, tokenize

_OPTION_WORDS = frozenset({"VERBOSE", "FULL", "FREEZE", "ANALYZE", "ANALYSE"})


def vacuum_sql(tokens: list[Token], text: str) -> str | None:
    """DuckDB's form of a PostgreSQL VACUUM / ANALYZE; None when it needs no change."""
    head = tokens[0].text.upper()
    if len(tokens) == 2 and tokens[1].token_type is TokenType.STRING:
        # VACUUM is a "command" token: the tokenizer hands back the rest as one string.
        text = tokens[1].text
        tokens = tokenize(POSTGRES, text)
    else:
        tokens = tokens[1:]  # (their offsets are into `text`)
    analyze = head in ("ANALYZE", "ANALYSE")
    i, changed = 0, head == "ANALYSE"
    if i < len(tokens) and tokens[i].token_type is TokenType.L_PAREN:  # (option [value], ...)
        depth = 0
        while i < len(tokens):
            word = tokens[i].text.upper()
            if tokens[i].token_type is TokenType.L_PAREN:
                depth += 1
            elif tokens[i].token_type is TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    i += 1
                    break
            elif word in ("ANALYZE", "ANALYSE") and depth == 1:
                analyze = True
            i += 1
        changed = True
    while i < len(tokens) and tokens[i].text.upper() in _OPTION_WORDS:
        word = tokens[i].text.upper()
        analyze = analyze or word in ("ANALYZE", "ANALYSE")
        changed = changed or word not in ("ANALYZE",)
        i += 1
    rest = tokens[i:]
    if any(t.token_type is TokenType.COMMA and _top_level(rest, t) for t in rest):
        return (
            "ANALYZE" if analyze and head != "VACUUM" else f"VACUUM{' ANALYZE' if analyze else ''}"
        )
    if not changed:
        return None
    target = text[rest[0].start :].strip() if rest else ""
    verb = (
        "ANALYZE" if head in ("ANALYZE", "ANALYSE") else ("VACUUM ANALYZE" if analyze else "VACUUM")
    )
    return f"{verb} {target}".strip()


def _top_level(tokens: list[Token], token: Token) -> bool:
    """Whether `token` is outside any parentheses of `tokens` (a table list's comma, not a
    column list's)."""
    depth = 0
    for t in tokens:
        if t is token:
            return depth == 0
        if t.token_type is TokenType.L_PAREN:
            depth += 1
        elif t.token_type is TokenType.R_PAREN:
            depth -= 1
    return False
