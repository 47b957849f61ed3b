"""The objects a transpiled (DuckDB) statement creates, replaces, alters, renames, drops,
comments on or writes rows into: for ownership checks (proxy/access/ownership.py).

`targets(sql)` parses the DuckDB SQL the server will run with sqlglot and reads the
targets off the tree; statements sqlglot only knows as an opaque command (CREATE MACRO
with a table body, DROP MACRO, CREATE / DROP TYPE, ALTER SEQUENCE) are read from their
tokens, which DuckDB's grammar fixes for these heads. A statement whose targets cannot
be determined comes back as `None`: the caller decides (refuse, for a limited login).
Names are lower-cased (DuckDB names are case-insensitive); '' where not written. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from transpiler import object_comments
from transpiler.text_cache import text_lru_cache

# Actions: create, replace (CREATE OR REPLACE), drop, alter, rename, comment, write (rows).
# Kinds: table, view, relation (a table or a view: ALTER TABLE, COMMENT ON TABLE may name
# either), sequence, index, function (a macro), schema, type.
_KINDS = {
    "TABLE": "table",
    "VIEW": "view",
    "SEQUENCE": "sequence",
    "INDEX": "index",
    "MACRO": "function",
    "FUNCTION": "function",
    "SCHEMA": "schema",
    "TYPE": "type",
}
_DML = (exp.Insert, exp.Update, exp.Delete, exp.Merge)


@dataclass(frozen=True, slots=True)
class Target:
    action: str
    kind: str
    catalog: str
    schema: str
    name: str  # for a schema: the schema's name (schema is then '')
    new_name: str = ""  # rename: the new name
    new_schema: str = ""  # ALTER ... SET SCHEMA (a rename into that schema), as written
    if_exists: bool = False  # CREATE ... IF NOT EXISTS / DROP ... IF EXISTS
    temporary: bool = False
    on_table: tuple[str, str, str] | None = (
        None  # CREATE INDEX: the table's (catalog, schema, name)
    )


@text_lru_cache(maxsize=2048)  # a client's statement texts: long ones are not kept
def targets(sql: str) -> tuple[Target, ...] | None:
    """Every target of the (possibly several, `;`-separated) DuckDB statements in `sql`."""
    if sql.lstrip()[:7].upper() == "COMMENT":  # COMMENT ON FUNCTION f(types): its owner may
        comment = object_comments.comment_command(sql)
        if comment is not None and comment.kind == "function":
            return (Target("comment", "function", "", comment.schema or "", comment.name),)
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except SqlglotError:
        return _from_tokens(sql)
    out: list[Target] = []
    for tree in trees:
        found = _from_tree(tree)
        if found is None:
            return None
        out += found
    return tuple(out)


def cascades(sql: str) -> bool:
    """Does a DuckDB DROP statement end in CASCADE? (Its dependents go too.)"""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except SqlglotError:
        return bool(_CASCADE.search(sql))
    if isinstance(tree, exp.Drop):
        return bool(tree.args.get("cascade"))
    return bool(_CASCADE.search(sql)) if isinstance(tree, exp.Command) else False


_CASCADE = re.compile(r"\bCASCADE\s*;?\s*$", re.IGNORECASE)


def _parts(table: exp.Expr | None) -> tuple[str, str, str]:
    if isinstance(table, exp.Schema):  # INSERT INTO t (a, b): the table with its columns
        table = table.this
    if not isinstance(table, exp.Table):
        return "", "", ""
    return table.catalog.lower(), table.db.lower(), table.name.lower()


def _setval_target(tree: exp.Select) -> list[Target]:
    """`SELECT setval('s', ...)`, the form of `ALTER SEQUENCE s RESTART` (sequence_restart.py):
    it alters the sequence it names."""
    call = tree.expressions[0] if len(tree.expressions) == 1 else None
    if not (isinstance(call, exp.Anonymous) and call.name.lower() == "setval"):
        return []
    name = call.expressions[0] if call.expressions else None
    if not (isinstance(name, exp.Literal) and name.is_string):
        return []
    try:
        table = exp.to_table(name.this, dialect="postgres")
    except SqlglotError:
        return []
    return [Target("alter", "sequence", *_parts(table))]


def _from_tree(tree: exp.Expr) -> list[Target] | None:
    if isinstance(tree, exp.Command):
        return _command(tree)
    if isinstance(tree, exp.Select) and tree.args.get("from_") is None:
        return _setval_target(tree)
    if isinstance(tree, _DML):
        return [Target("write", "relation", *_parts(tree.this))]
    if isinstance(tree, exp.Copy):
        return (
            []
            if tree.args.get("kind") is False
            else [Target("write", "relation", *_parts(tree.this))]
        )
    if isinstance(tree, exp.Create):
        return [_create(tree)]
    if isinstance(tree, exp.Drop):
        kind = _KINDS.get((tree.args.get("kind") or "").upper())
        if kind is None:
            return None
        found = []
        for table in tree.args.get("tables") or [tree.this]:
            catalog, schema, name = _parts(table)
            if kind == "schema":
                catalog, schema, name = "", "", schema or name
            found.append(
                Target("drop", kind, catalog, schema, name, if_exists=bool(tree.args.get("exists")))
            )
        return found
    if isinstance(tree, exp.Alter):
        kind = _KINDS.get((tree.args.get("kind") or "").upper())
        if kind is None:
            return None
        kind = "relation" if kind == "table" else kind
        parts = _parts(tree.this)
        exists = bool(tree.args.get("exists"))
        for action in tree.args.get("actions") or []:
            if isinstance(action, exp.AlterRename):
                new = _parts(action.this)[2]
                return [Target("rename", kind, *parts, new_name=new, if_exists=exists)]
        return [Target("alter", kind, *parts, if_exists=exists)]
    if isinstance(tree, exp.Comment):
        kind = _KINDS.get((tree.args.get("kind") or "").upper())
        this = tree.this
        if isinstance(this, exp.Column):  # COMMENT ON COLUMN [s.]t.c: the table
            table = exp.Table(this=this.args.get("table"), db=this.args.get("db"))
            return [Target("comment", "relation", *_parts(table))]
        if kind is None:
            return None
        if kind == "schema":
            return [Target("comment", kind, "", "", _parts(this)[1] or _parts(this)[2])]
        return [Target("comment", "relation" if kind == "table" else kind, *_parts(this))]
    if isinstance(tree, exp.TruncateTable):
        return [Target("write", "relation", *_parts(t)) for t in tree.expressions]
    return []  # a query, SET, ...: no target


def _create(tree: exp.Create) -> Target:
    kind = _KINDS.get((tree.args.get("kind") or "").upper(), "table")
    this = tree.this
    if isinstance(this, exp.Schema):
        this = this.this
    if isinstance(this, exp.UserDefinedFunction):
        this = this.this
    props = tree.args.get("properties")
    temporary = bool(props and props.find(exp.TemporaryProperty))
    action = "replace" if tree.args.get("replace") else "create"
    exists = bool(tree.args.get("exists"))
    if isinstance(this, exp.Index):
        on = _parts(this.args.get("table"))
        name = this.name.lower()
        return Target(action, "index", on[0], on[1], name, if_exists=exists, on_table=on)
    catalog, schema, name = _parts(this)
    if kind == "schema":
        catalog, schema, name = "", "", schema or name
    return Target(action, kind, catalog, schema, name, if_exists=exists, temporary=temporary)


def _command(tree: exp.Command) -> list[Target] | None:
    rest = tree.args.get("expression")
    text = f"{tree.this} {rest if isinstance(rest, str) else (rest.name if rest else '')}"
    found = _from_tokens(text)
    return None if found is None else list(found)


def _from_tokens(sql: str) -> tuple[Target, ...] | list[Target] | None:
    """CREATE [OR REPLACE] [TEMP] MACRO|TYPE ..., DROP MACRO [TABLE] / TYPE, ALTER SEQUENCE."""
    try:
        tokens = [t for t in sqlglot.tokenize(sql, read="duckdb")]
    except SqlglotError:
        return None
    words = [_word(t) for t in tokens]
    if not words:
        return []
    if words[:3] == ["COMMENT", "ON", "CONSTRAINT"]:  # its table's owner may (object_comments)
        comment = object_comments.comment_command(sql)
        if comment is None or comment.table is None:
            return None
        return [Target("comment", "relation", "", comment.schema or "", comment.table)]

    head, i = words[0], 1
    if head not in ("CREATE", "DROP", "ALTER"):
        return None
    replace = temporary = exists = False
    if words[i : i + 2] == ["OR", "REPLACE"]:
        replace, i = True, i + 2
    if i < len(words) and words[i] in ("TEMP", "TEMPORARY"):
        temporary, i = True, i + 1
    kind = _KINDS.get(words[i]) if i < len(words) else None
    if kind is None:
        return None
    i += 1
    if kind == "function" and i < len(words) and words[i] == "TABLE":
        i += 1
    if words[i : i + 3] == ["IF", "NOT", "EXISTS"]:
        exists, i = True, i + 3
    elif words[i : i + 2] == ["IF", "EXISTS"]:
        exists, i = True, i + 2
    parts: list[str] = []
    while (
        i < len(tokens)
        and tokens[i].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        or (i < len(tokens) and not parts and tokens[i].text.isidentifier())
    ):
        parts.append(tokens[i].text.lower())
        if i + 1 < len(tokens) and tokens[i + 1].token_type is TokenType.DOT:
            i += 2
        else:
            break
    if not parts or len(parts) > 3:
        return None
    catalog, schema, name = ([""] * (3 - len(parts)) + parts)[-3:]
    if kind == "schema":
        catalog, schema, name = "", "", name
    action = {"DROP": "drop", "ALTER": "alter"}.get(head, "replace" if replace else "create")
    if head == "ALTER" and words[i + 1 : i + 3] == ["SET", "SCHEMA"] and i + 3 < len(tokens):
        moved = tokens[i + 3]  # ALTER TABLE | VIEW | SEQUENCE t SET SCHEMA s: moved, named t
        to = moved.text if moved.token_type is TokenType.IDENTIFIER else moved.text.lower()
        return [Target("rename", kind, catalog, schema, name, name, to, exists, temporary)]
    if head == "ALTER" and words[i + 1 : i + 3] == ["RENAME", "TO"] and i + 3 < len(tokens):
        new = tokens[i + 3]  # ALTER SEQUENCE s RENAME TO s2 (sqlglot parses no such ALTER)
        to = new.text if new.token_type is TokenType.IDENTIFIER else new.text.lower()
        return [Target("rename", kind, catalog, schema, name, to, "", exists, temporary)]
    return [Target(action, kind, catalog, schema, name, if_exists=exists, temporary=temporary)]


def _word(token: Token) -> str:
    return "" if token.token_type is TokenType.IDENTIFIER else token.text.upper()
