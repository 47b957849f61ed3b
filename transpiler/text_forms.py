"""Statements the transpiler answers from their tokens and text, without sqlglot's tree:
pg_dump's and migration tools' DDL in words DuckDB lacks (CREATE SCHEMA ... AUTHORIZATION,
OWNER TO, OWNED BY, ALTER SEQUENCE ... RESTART, storage options, identity changes),
COMMENT ON objects DuckDB cannot hold, GRANT / REVOKE, SQL functions as macros,
statements passed to DuckDB as written, text the tokenizer rejects, and LISTEN / NOTIFY
(refused). Pure; core.py calls these before it parses.
"""

from __future__ import annotations

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from transpiler import (
    domains,
    dump_ddl,
    external_access,
    identity,
    maintenance,
    multi_object,
    object_comments,
    plpgsql_trigger,
    sequence_restart,
    sql_functions,
    trigger_ddl,
    unsupported_ddl,
)
from transpiler.errors import TranspileError
from transpiler.model import Statement, UtilityCommand
from transpiler.privileges import is_privilege_tag, privilege_statement
from transpiler.splitter import Chunk
from transpiler.token_flags import Triggers, uses_hati_text

# Statements passed through as written (sqlglot would mangle or reject them).
NATIVE = frozenset(
    {
        "PRAGMA",
        "COPY",
        "ATTACH",
        "DETACH",
        "INSTALL",
        "LOAD",
        "CHECKPOINT",
        "FORCE",
        "EXPORT",
        "IMPORT",
        "CALL",
        "USE",
        "SUMMARIZE",
        "VACUUM",
        "PIVOT",
        "UNPIVOT",
    }
)

# CREATE / DROP TRIGGER, ALTER TABLE ... {ENABLE | DISABLE} TRIGGER name (trigger_ddl.py)
_TRIGGER_TAGS = frozenset({"CREATE TRIGGER", "DROP TRIGGER", "ALTER TABLE"})


def statement(chunk: Chunk, kind: str, tag: str) -> Statement | None:
    """The statement when its text alone says what to run; None: parse it."""
    tokens = chunk.tokens
    if tag in _TRIGGER_TAGS and (ddl := trigger_ddl.parse(chunk.text)) is not None:
        return Statement(sql=chunk.text, kind="ddl", tag=tag, trigger=ddl)
    if tag == "CREATE SCHEMA" and (schema := dump_ddl.schema_authorization(chunk.text)):
        return Statement(sql=schema, kind=kind, tag=tag)
    if tag == "COMMENT" and (comment := object_comments.comment_command(chunk.text)):
        return Statement(sql=chunk.text, kind="utility", tag=tag, command=comment)
    if is_privilege_tag(tag):
        words = [t.text.upper() for t in tokens]
        if (granted := privilege_statement(tag, words, chunk.text, chunk.start)) is not None:
            return granted
    if kind == "ddl" and tokens[0].text.upper() == "ALTER":
        if (storage := maintenance.storage_alter(tokens)) is not None:
            name, if_exists = storage  # storage / statistics / triggers: acknowledged
            return Statement(
                sql=chunk.text,
                kind="utility",
                tag=tag,
                command=UtilityCommand(
                    f"alter storage {tag.split()[1].lower()} "
                    f"{'if exists ' if if_exists else ''}{name}"
                ),
            )
        owner = dump_ddl.owner_to(chunk.text)
        if owner is not None:  # one owner of everything here: acknowledged
            return Statement(
                sql=chunk.text,
                kind="utility",
                tag=f"ALTER {owner[0]}",
                command=UtilityCommand(f"alter {owner[0].lower()} owner to {owner[1]}"),
            )
        if tag == "ALTER TABLE" and (ident := identity.alter(chunk.text)) is not None:
            return Statement(sql=chunk.text, kind=kind, tag=tag, identity_alter=ident)
        if tag == "ALTER SEQUENCE" and (restart := sequence_restart.restart_sql(chunk.text)):
            return Statement(sql=restart, kind=kind, tag=tag)
        if tag == "ALTER SEQUENCE" and (serial := dump_ddl.serial_owned(chunk.text)):
            return Statement(  # owned by its name already: checked it exists, acknowledged
                sql=chunk.text,
                kind="utility",
                tag=tag,
                command=UtilityCommand(f"alter storage sequence {serial}"),
            )
        if tag == "ALTER SEQUENCE" and (owned := dump_ddl.owned_by(chunk.text)) is not None:
            return Statement(
                sql=owned,
                kind=kind,
                tag=tag,
                external_access=external_access.of_tokens(chunk.tokens),
            )
    if tag == "CREATE FUNCTION" and plpgsql_trigger.is_trigger_function(chunk.text):
        sql = plpgsql_trigger.create_sql(chunk.text, sql_functions.REGISTRY)
        return Statement(sql=sql, kind=kind, tag=tag)
    if tag in ("CREATE DOMAIN", "ALTER DOMAIN", "DROP DOMAIN"):
        return Statement(sql=chunk.text, kind="ddl", tag=tag, command=domains.parse(chunk.text))
    if kind == "ddl" and tag.startswith(("CREATE ", "ALTER TABLE")):
        unsupported_ddl.check(tag, chunk.text, chunk.start, tokens)
    if tag == "CREATE FUNCTION" and (macro := sql_functions.sql_function_macro(chunk.text)):
        return Statement(
            sql=macro, kind=kind, tag=tag, external_access=external_access.of_tokens(tokens)
        )
    return None


def untokenizable(sql: str, err: TokenError) -> tuple[Statement, ...]:
    if uses_hati_text(sql):
        raise TranspileError("42601", f"syntax error: {err}", None) from None
    text = sql.strip()
    if not text:
        return ()
    word = text.split(None, 1)[0].upper()
    # DuckDB may read text the tokenizer rejects differently: nothing in it is checked.
    unchecked = ("SQL that cannot be checked",)
    return (Statement(sql=text, kind="other", tag=word, external_access=unchecked),)


def declares_foreign_key(tokens: list[Token]) -> bool:
    return any(t.text.upper() == "REFERENCES" for t in tokens)


_SERIAL_TOKENS = frozenset({TokenType.SERIAL, TokenType.BIGSERIAL, TokenType.SMALLSERIAL})


def declares_serial(tokens: list[Token], tag: str) -> bool:
    if tag not in ("CREATE TABLE", "ALTER TABLE"):
        return False
    return any(t.token_type in _SERIAL_TOKENS or t.text.upper() == "IDENTITY" for t in tokens)


def pass_through(chunk: Chunk, kind: str, tag: str, triggers: Triggers) -> Statement:
    """The statement as written: DuckDB parses this text, so its tokens are checked."""
    if tag in ("DROP SEQUENCE", "DROP SCHEMA") and (each := multi_object.split_text(chunk.text)):
        return Statement(sql=each, kind=kind, tag=tag, atomic=True)  # one DuckDB DROP each
    return Statement(
        sql=chunk.text,
        kind=kind,
        tag=tag,
        param_count=triggers.max_param,
        external_access=external_access.of_tokens(chunk.tokens),
    )
