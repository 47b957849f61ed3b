"""Statements over several objects DuckDB takes one at a time, and ALTER TABLE on views.

- `DROP TABLE|VIEW|SEQUENCE|INDEX|SCHEMA a, b [CASCADE]`: DuckDB drops one object per
  statement, so each object gets its own DROP (`split`; `split_text` for the DROP
  SEQUENCE / SCHEMA lists sqlglot cannot parse);
- `TRUNCATE [TABLE] [ONLY] a, b [RESTART|CONTINUE IDENTITY] [CASCADE|RESTRICT]`: one
  `TRUNCATE` per table. DuckDB cannot restart a sequence: RESTART IDENTITY names the
  tables whose sequences the server makes again (proxy/pgserver/sequence_restart.py).

`DROP TABLE` also names its tables (`dropped_tables`): PostgreSQL drops a serial column's
sequence with its table (OWNED BY); DuckDB cannot make a table own one, so the server
drops them after the table.

The statements of one such request run in one transaction (`Statement.atomic`): all or
nothing, as in PostgreSQL.

`ALTER TABLE v RENAME TO w` is valid in PostgreSQL when v is a view; DuckDB wants
`ALTER VIEW`. The transpiler does not know the relation's kind, so it hands the server
the ALTER VIEW form to run instead when DuckDB says the target is a view
(`Statement.view_sql`).
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

_DROP_KINDS = frozenset({"TABLE", "VIEW", "SEQUENCE", "INDEX", "SCHEMA", "MACRO", "TYPE"})

Restart = tuple[tuple[str | None, str], ...]


def split(tree: exp.Expr) -> tuple[list[exp.Expr], Restart] | None:
    """One statement per object and the (schema, table)s whose sequences restart
    (TRUNCATE ... RESTART IDENTITY), or None when `tree` is not a DROP or TRUNCATE that
    needs splitting (TRUNCATE with options is always rebuilt)."""
    if isinstance(tree, exp.Drop):
        tables = tree.args.get("tables") or []
        kind = (tree.args.get("kind") or "").upper()
        if len(tables) < 2 or kind not in _DROP_KINDS:
            return None
        parts = []
        for table in tables:
            single = tree.copy()
            single.set("tables", [table.copy()])
            parts.append(single)
        return parts, ()
    if isinstance(tree, exp.TruncateTable):
        tables = tree.expressions
        identity = (tree.text("identity") or "").upper()
        option = tree.text("option")
        if tree.args.get("is_database") or not tables:
            return None
        if len(tables) < 2 and not identity and not option and not tables[0].args.get("only"):
            return None
        parts = []
        for table in tables:
            single = table.copy()
            single.set("only", None)
            parts.append(exp.TruncateTable(expressions=[single]))
        restart: Restart = ()
        if identity == "RESTART":
            restart = tuple((t.text("db") or None, t.name) for t in tables)
        return parts, restart
    return None


_TEXT_HEAD = re.compile(r"^\s*DROP\s+(SEQUENCE|SCHEMA)\s+(IF\s+EXISTS\s+)?", re.IGNORECASE)
_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER)


def split_text(sql: str) -> str | None:
    """`DROP SEQUENCE|SCHEMA [IF EXISTS] a, b [CASCADE|RESTRICT]` as one DROP per object
    (names as written), or None for anything else (one object: DuckDB takes it)."""
    head = _TEXT_HEAD.match(sql)
    if head is None:
        return None
    try:
        tokens = sqlglot.tokenize(sql[head.end() :], read="postgres")
    except SqlglotError:
        return None
    while tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens.pop()
    tail = ""
    if tokens and tokens[-1].text.upper() in ("CASCADE", "RESTRICT"):
        tail = " " + tokens.pop().text.upper()
    names, current, expect_name = [], [], True
    for token in tokens:
        if expect_name and (token.token_type in _NAME_TOKENS or token.text.isidentifier()):
            quoted = token.token_type is TokenType.IDENTIFIER
            current.append('"' + token.text.replace('"', '""') + '"' if quoted else token.text)
            expect_name = False
        elif not expect_name and token.token_type is TokenType.DOT:
            if len(current) == 1 and current[0].strip('"').lower() == "public":
                current = ["main"]  # a name's schema: PostgreSQL's public is DuckDB's main
            expect_name = True
        elif not expect_name and token.token_type is TokenType.COMMA:
            names.append(".".join(current))
            current, expect_name = [], True
        else:
            return None
    if expect_name or not current:
        return None
    names.append(".".join(current))
    if len(names) < 2:
        return None
    verb = f"DROP {head[1].upper()} {'IF EXISTS ' if head[2] else ''}"
    return "; ".join(f"{verb}{name}{tail}" for name in names)


def dropped_tables(tree: exp.Expr) -> Restart:
    """The (schema, table)s a DROP TABLE names: their serial sequences go with them."""
    if not isinstance(tree, exp.Drop) or (tree.args.get("kind") or "").upper() != "TABLE":
        return ()
    tables = tree.args.get("tables") or [tree.this]
    return tuple((t.text("db") or None, t.name) for t in tables if isinstance(t, exp.Table))


def view_form(tree: exp.Expr) -> exp.Expr | None:
    """`ALTER VIEW v RENAME TO w` for `ALTER TABLE v RENAME TO w`, else None."""
    if not isinstance(tree, exp.Alter) or (tree.args.get("kind") or "").upper() != "TABLE":
        return None
    actions = tree.args.get("actions") or []
    if len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        return None
    view = tree.copy()
    view.set("kind", "VIEW")
    return view
