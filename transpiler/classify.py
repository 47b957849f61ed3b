"""Statement kind and Postgres command tag, from the first keywords of a statement.

Works on tokens, so it serves parsed statements and pass-through DuckDB-native SQL
alike.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

_ROW_WORDS = {"SELECT", "VALUES", "TABLE", "FROM", "SUMMARIZE", "DESCRIBE", "PIVOT", "UNPIVOT"}
_DML = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete", "MERGE": "merge"}
_CREATE_MODIFIERS = {
    "OR",
    "REPLACE",
    "TEMP",
    "TEMPORARY",
    "UNIQUE",
    "UNLOGGED",
    "GLOBAL",
    "LOCAL",
    "PERSISTENT",
    "TRANSIENT",
}
_MULTI_WORD_OBJECTS = {"MATERIALIZED": "MATERIALIZED VIEW", "FOREIGN": "FOREIGN TABLE"}
# DuckDB-native statements without a Postgres tag: the tag is the keyword itself.
_OTHER = {
    "ATTACH",
    "DETACH",
    "INSTALL",
    "LOAD",
    "PRAGMA",
    "CHECKPOINT",
    "FORCE",
    "VACUUM",
    "ANALYZE",
    "EXPORT",
    "IMPORT",
    "CALL",
    "USE",
    "GRANT",
    "REVOKE",
    "COMMENT",
    "PREPARE",
    "EXECUTE",
    "UNPIVOT",
    "NOTIFY",
    "LOCK",
    "DO",
}


def classify(tokens: list[Token]) -> tuple[str, str]:
    """(kind, tag) for a statement's tokens."""
    words = [t.text.upper() for t in tokens[:6]]
    head = words[0] if words else ""
    if head in _ROW_WORDS:
        return "select", "SELECT"
    if head == "WITH":
        return _classify_with(tokens)
    if head in _DML:
        return _DML[head], head
    if head == "(":
        return "select", "SELECT"
    if head == "CREATE":
        return _classify_create(tokens, words)
    if head in ("DROP", "ALTER"):
        obj = _object_word(words, 1)
        return "ddl", f"{head} {obj}".strip()
    if head == "TRUNCATE":
        return "ddl", "TRUNCATE TABLE"
    if head == "COPY":
        return "copy", "COPY"
    if head == "EXPLAIN":
        return "explain", "EXPLAIN"
    if head in _OTHER:
        return "other", head
    return "other", head


def _object_word(words: list[str], i: int) -> str:
    while i < len(words) and words[i] in _CREATE_MODIFIERS:
        i += 1
    if i >= len(words):
        return ""
    return _MULTI_WORD_OBJECTS.get(words[i], words[i])


def _classify_create(tokens: list[Token], words: list[str]) -> tuple[str, str]:
    obj = _object_word(words, 1)
    if obj == "TABLE" and _has_top_level_as(tokens):
        return "ddl", "SELECT"  # Postgres tags CREATE TABLE AS with "SELECT n"
    return "ddl", f"CREATE {obj}".strip()


def _has_top_level_as(tokens: list[Token]) -> bool:
    depth = 0
    for token in tokens:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.token_type is TokenType.ALIAS:
            return True
    return False


def _classify_with(tokens: list[Token]) -> tuple[str, str]:
    """The statement after the CTE list decides: WITH ... INSERT is an INSERT."""
    depth = 0
    for token in tokens[1:]:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0:
            word = token.text.upper()
            if word in _DML:
                return _DML[word], word
            if word in ("SELECT", "VALUES", "TABLE", "FROM"):
                return "select", "SELECT"
    return "select", "SELECT"
