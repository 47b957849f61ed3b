"""DDL for PostgreSQL features hatiproxy does not have, which pg_dump writes when the
source uses them: refused with 0A000 naming the feature (where a restore with
ON_ERROR_STOP stops), not a syntax error a user would take for a typo in the dump.

A SQL-language function with one query is a macro (dump_ddl.sql_function_macro); a
function or procedure in another language (plpgsql, C) is not, nor are triggers,
aggregates, operators, rules, row-level security policies, replication
objects, partitioned tables and table inheritance.
"""

from __future__ import annotations

import re

from sqlglot.tokens import Token, TokenType

from transpiler.errors import TranspileError

_WHY = {
    "CREATE TRIGGER": "table triggers",
    "CREATE CONSTRAINT": "constraint triggers",
    "CREATE EVENT": "event triggers",
    "CREATE AGGREGATE": "user-defined aggregates",
    "CREATE OPERATOR": "user-defined operators",
    "CREATE RULE": "rules",
    "CREATE POLICY": "row-level security policies",
    "CREATE PUBLICATION": "logical replication",
    "CREATE SUBSCRIPTION": "logical replication",
}
_LANGUAGE = re.compile(r"\bLANGUAGE\s+'?\"?([A-Za-z_]\w*)", re.IGNORECASE)
_ROUTINE_TAGS = frozenset({"CREATE FUNCTION", "CREATE PROCEDURE"})


def _table_clause(tag: str, tokens: list[Token]) -> str | None:
    """Partitioning or inheritance in a CREATE / ALTER TABLE (outside parentheses), which
    sqlglot would drop, leaving a plain table: the clause, else None."""
    words: list[str] = []
    depth = 0
    for token in tokens:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0:
            if tag == "CREATE TABLE" and token.text.upper() == "AS":
                break  # CREATE TABLE ... AS <query>: the query's words are its own
            words += token.text.upper().split()  # ("PARTITION BY" is one token)
    clauses = _CREATE_CLAUSES if tag == "CREATE TABLE" else _ALTER_CLAUSES
    for first, second in zip(words, [*words[1:], ""], strict=True):
        for clause in clauses:
            if clause == first or clause == f"{first} {second}":
                return clause
    return None


_CREATE_CLAUSES = ("PARTITION BY", "PARTITION OF", "INHERITS")
_ALTER_CLAUSES = ("ATTACH PARTITION", "DETACH PARTITION", "INHERIT")


def check(tag: str, text: str, start: int, tokens: list[Token]) -> None:
    """Raise 0A000 for a statement of an unsupported kind (tag: classify's)."""
    feature, more = _WHY.get(tag), ""
    if tag in ("CREATE TABLE", "ALTER TABLE"):
        clause = _table_clause(tag, tokens)
        if clause is not None:
            raise TranspileError(
                "0A000",
                f"{clause} is not supported: hatiproxy has no partitioned tables or table "
                "inheritance.",
                start + 1,
            )
    if feature is None and tag in _ROUTINE_TAGS:
        m = _LANGUAGE.search(text)
        if m is not None and m[1].lower() != "sql":
            feature = f"functions or procedures in language {m[1].lower()}"
            more = (
                " A SQL-language function whose body is one query, and a PL/pgSQL trigger"
                " function (RETURNS trigger) setting NEW's columns, are supported."
            )
    if feature is not None:
        raise TranspileError(
            "0A000", f"{tag} is not supported: hatiproxy has no {feature}.{more}", start + 1
        )
