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

import re

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


# ALTER TABLE / ALTER INDEX actions about PostgreSQL's physical storage, statistics
# targets, replication and triggers: DuckDB keeps none of these, so they are acknowledged
# (the relation checked to exist) and change nothing.
_STORAGE_ACTIONS = (
    ("ALTER", "*", "SET", "STATISTICS"),
    ("ALTER", "*", "SET", "STORAGE"),
    ("ALTER", "*", "SET", "COMPRESSION"),
    ("ALTER", "*", "SET", "("),
    ("ALTER", "*", "RESET", "("),
    ("SET", "("),
    ("RESET", "("),
    ("SET", "LOGGED"),
    ("SET", "UNLOGGED"),
    ("SET", "TABLESPACE"),
    ("SET", "ACCESS", "METHOD"),
    ("SET", "WITHOUT", "CLUSTER"),
    ("SET", "WITHOUT", "OIDS"),
    ("CLUSTER", "ON"),
    ("REPLICA", "IDENTITY"),
    ("VALIDATE", "CONSTRAINT"),
    ("ENABLE",),
    ("DISABLE",),
)


def storage_alter(tokens: list[Token]) -> tuple[str, bool] | None:
    """(the relation as written, IF EXISTS) of an `ALTER TABLE | INDEX` whose every action
    is one of _STORAGE_ACTIONS; None for anything else."""
    words = [t.text.upper() for t in tokens]
    if len(words) < 4 or words[0] != "ALTER" or words[1] not in ("TABLE", "INDEX"):
        return None
    i, if_exists = 2, False
    if words[i : i + 2] == ["IF", "EXISTS"]:
        i, if_exists = i + 2, True
    if i < len(words) and words[i] == "ONLY":
        i += 1
    start = i
    while i + 1 < len(tokens) and tokens[i + 1].token_type is TokenType.DOT:
        i += 2
    if i >= len(tokens):
        return None
    name = "".join(
        f'"{t.text}"' if t.token_type is TokenType.IDENTIFIER else t.text
        for t in tokens[start : i + 1]
    )
    actions: list[list[str]] = [[]]
    depth = 0
    for token, word in zip(tokens[i + 1 :], words[i + 1 :], strict=True):
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif token.token_type is TokenType.COMMA and depth == 0:
            actions.append([])
            continue
        actions[-1].append(word)
    for action in actions:
        if action[:1] == ["ALTER"] and action[1:2] == ["COLUMN"]:
            action = ["ALTER", *action[2:]]
        if not any(_matches(action, pattern) for pattern in _STORAGE_ACTIONS):
            return None
    return name, if_exists


_TRIGGER_SWITCH = re.compile(r"\b(ENABLE|DISABLE)\s+TRIGGER\s+ALL\b", re.IGNORECASE)


def ri_trigger_switch(sql: str) -> bool | None:
    """Of an `ALTER TABLE t ... {ENABLE | DISABLE} TRIGGER ALL` (ActiveRecord's
    disable_referential_integrity, pg_dump --disable-triggers): True for ENABLE, False for
    DISABLE (the last such action); None when there is none. ALL takes in the foreign key
    triggers, `TRIGGER USER` or a trigger's name does not."""
    found = _TRIGGER_SWITCH.findall(sql)
    return found[-1].upper() == "ENABLE" if found else None


def _matches(action: list[str], pattern: tuple[str, ...]) -> bool:
    if len(action) < len(pattern):
        return False
    return all(p in ("*", w) for p, w in zip(pattern, action, strict=False))


def index_rename(sql: str) -> tuple[str, str, bool] | None:
    """(the index as written, its new name, IF EXISTS) of an `ALTER INDEX [IF EXISTS] i
    RENAME TO j` (DuckDB has none: proxy/pgserver/index_rename.py), else None."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.ParseError:
        return None
    actions = tree.args.get("actions") or [] if isinstance(tree, exp.Alter) else []
    if len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        return None
    new = actions[0].this
    if not isinstance(new, exp.Table) or not isinstance(tree.this, exp.Table):
        return None
    return tree.this.sql("postgres"), new.name, bool(tree.args.get("exists"))
