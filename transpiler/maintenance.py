"""PostgreSQL's VACUUM / ANALYZE forms in DuckDB's grammar, and REINDEX / CLUSTER.

DuckDB takes `VACUUM [ANALYZE] [table [(columns)]]` and `ANALYZE [table]`: one table, no
options, base tables only. PostgreSQL's VERBOSE, FULL, FREEZE and the parenthesised
options (`VACUUM (VERBOSE, ANALYZE) t`) change how PostgreSQL reclaims space, which DuckDB
does its own way: they are dropped, ANALYZE kept. The relations named (several, views,
catalogs: vacuumdb names every table pg_class lists, pg_catalog's too) go to the server,
which looks at each as PostgreSQL does (proxy/pgserver/maintenance.py).

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


def _statement(tokens: list[Token]) -> tuple[str, list[Token]]:
    """(verb, the tokens after it)."""
    if len(tokens) == 2 and tokens[1].token_type is TokenType.STRING:
        # VACUUM is a "command" token: the tokenizer hands back the rest as one string.
        return tokens[0].text.upper(), tokenize(POSTGRES, tokens[1].text)
    return tokens[0].text.upper(), tokens[1:]


def _options(tokens: list[Token], analyze: bool) -> tuple[int, bool, bool]:
    """(where the relations start, ANALYZE asked for, an option DuckDB lacks given) of the
    tokens after the verb: `(option [value], ...)` and / or VERBOSE FULL FREEZE ANALYZE."""
    i, changed = 0, False
    if tokens and tokens[0].token_type is TokenType.L_PAREN:
        depth, changed = 0, True
        while i < len(tokens):
            token, i = tokens[i], i + 1
            if token.token_type is TokenType.L_PAREN:
                depth += 1
            elif token.token_type is TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    break
            elif depth == 1 and token.text.upper() in ("ANALYZE", "ANALYSE"):
                analyze = True
    while i < len(tokens) and tokens[i].text.upper() in _OPTION_WORDS:
        word = tokens[i].text.upper()
        analyze = analyze or word in ("ANALYZE", "ANALYSE")
        changed = changed or word != "ANALYZE"
        i += 1
    return i, analyze, changed


Targets = tuple[tuple[str, tuple[str, ...]], ...]


def vacuum(tokens: list[Token]) -> tuple[str, Targets, bool]:
    """(verb, relations, changed) of a PostgreSQL VACUUM / ANALYZE: the verb is "vacuum",
    "vacuum analyze" or "analyze"; each relation as written (quoted parts kept quoted)
    with its column names (unquoted ones folded to lower case), for the server to look
    at (proxy/pgserver/maintenance.py); changed: with no relations, the statement needs
    DuckDB's spelling (an option DuckDB lacks, ANALYSE), which is the verb alone."""
    head, tokens = _statement(tokens)
    i, analyze, changed = _options(tokens, head in ("ANALYZE", "ANALYSE"))
    verb = "analyze" if head != "VACUUM" else ("vacuum analyze" if analyze else "vacuum")
    targets: list[tuple[str, tuple[str, ...]]] = []
    while i < len(tokens):
        start = i
        while i < len(tokens) and tokens[i].token_type not in (TokenType.L_PAREN, TokenType.COMMA):
            i += 1
        relation = "".join(
            f'"{t.text}"' if t.token_type is TokenType.IDENTIFIER else t.text
            for t in tokens[start:i]
        )
        columns: list[str] = []
        if i < len(tokens) and tokens[i].token_type is TokenType.L_PAREN:
            i += 1
            while i < len(tokens) and tokens[i].token_type is not TokenType.R_PAREN:
                t = tokens[i]
                if t.token_type is not TokenType.COMMA:
                    quoted = t.token_type is TokenType.IDENTIFIER
                    columns.append(t.text if quoted else t.text.lower())
                i += 1
            i += 1
        if relation:
            targets.append((relation, tuple(columns)))
        i += 1  # the comma
    return verb, tuple(targets), changed or head == "ANALYSE"


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
