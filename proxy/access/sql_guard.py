"""What SQL an API key may run, checked per statement before it reaches DuckDB.

Two rules, on the wire and in the SQL that MCP and REST run in-process:
- a read-only key (no `query:write`) changes nothing: only reads, session settings
  and transaction control pass; anything else is SQLSTATE 25006, as in a Postgres
  read-only transaction. Agent table functions that write count as writes.
- only admins (and keyless trust / configured users) reach the server's files and
  extensions: `read_csv('/etc/passwd')`, `FROM 'file.parquet'`, `COPY ... TO 'file'`,
  ATTACH, INSTALL / LOAD, PRAGMA, EXPORT / IMPORT DATABASE are 42501 for others.

File functions are found on the DuckDB SQL's tokens (a name followed by `(`, or a
string after FROM / JOIN), so quoting, case, nesting in CTEs and subqueries do not hide
them. DuckDB has no per-connection file sandbox (enable_external_access is global
and one-way), so this check is where the line is drawn.
"""

from __future__ import annotations

import re

from sqlglot.tokens import Tokenizer, TokenType

from proxy.agent.base import REGISTRY, Identity
from proxy.wire.errors import PgError
from transpiler.model import Statement

_READ_ONLY_KINDS = frozenset(
    {"select", "show", "explain", "set", "reset", "begin", "commit", "rollback", "savepoint"}
)
_READ_ONLY_UTILITY = frozenset({"DISCARD", "CLOSE", "DEALLOCATE", "FETCH", "MOVE", "LISTEN"})
_WRITING_FUNCTIONS = frozenset({"nextval", "setval"})

FILE_FUNCTIONS = frozenset(
    {
        "read_csv",
        "read_csv_auto",
        "csv_scan",
        "sniff_csv",
        "read_parquet",
        "parquet_scan",
        "parquet_metadata",
        "parquet_schema",
        "parquet_file_metadata",
        "parquet_kv_metadata",
        "parquet_bloom_probe",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_json_objects_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "read_ndjson_objects",
        "json_scan",
        "read_text",
        "read_blob",
        "glob",
        "read_xlsx",
        "delta_scan",
        "iceberg_scan",
        "iceberg_metadata",
        "iceberg_snapshots",
        "st_read",
        "st_read_meta",
        "sqlite_scan",
        "sqlite_attach",
        "postgres_scan",
        "postgres_attach",
        "mysql_scan",
        "load_extension",
    }
)
_FILE_NAME = re.compile(
    r"[/\\~]|\.(csv|tsv|parquet|json|jsonl|ndjson|txt|gz|zst|xlsx|arrow|db|duckdb|sqlite)$",
    re.IGNORECASE,
)
_TOKENIZER = Tokenizer()
_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER)


def _tokens(sql: str) -> list:
    try:
        return _TOKENIZER.tokenize(sql)
    except Exception:  # untokenizable text: DuckDB will reject it anyway
        return []


def called_functions(sql: str) -> set[str]:
    """Lower-cased names of everything called in `sql` (`name(`)."""
    tokens = _tokens(sql)
    names = set()
    for tok, nxt in zip(tokens, tokens[1:], strict=False):
        if nxt.token_type == TokenType.L_PAREN and (
            tok.token_type in _NAME_TOKENS or tok.text.lower() in FILE_FUNCTIONS
        ):
            names.add(tok.text.lower())
    return names


def _file_tables(sql: str) -> bool:
    """`FROM 'file.csv'` / `FROM "x.parquet"`: DuckDB reads a file named as a table
    (its replacement scan), whether the name is a string or a quoted identifier."""
    tokens = _tokens(sql)
    for tok, nxt in zip(tokens, tokens[1:], strict=False):
        if nxt.token_type == TokenType.STRING and (
            tok.token_type in (TokenType.FROM, TokenType.JOIN)
            or (tok.token_type == TokenType.COMMA and _FILE_NAME.search(nxt.text))
        ):
            return True
        if nxt.token_type == TokenType.IDENTIFIER and _FILE_NAME.search(nxt.text):
            return True
    return False


def _copy_uses_files(sql: str) -> bool:
    upper = " ".join(sql.upper().split())
    return " TO STDOUT" not in upper and " FROM STDIN" not in upper


def file_access(st: Statement) -> str | None:
    """What in the statement reaches server files or extensions (None: nothing)."""
    if st.kind == "other":
        return st.tag or "this statement"
    if st.kind == "copy" and _copy_uses_files(st.sql):
        return "COPY to or from a file"
    found = sorted(called_functions(st.sql) & FILE_FUNCTIONS)
    if found:
        return f"{found[0]}()"
    if _file_tables(st.sql):
        return "a file named in FROM"
    return None


def _writes(st: Statement) -> str | None:
    """Why the statement would change data (None: it only reads)."""
    for call in st.agent_calls:
        if call.name not in REGISTRY or REGISTRY.get(call.name).writes:
            return f"{call.name}()"
    if st.kind == "copy":
        return None if " TO STDOUT" in " ".join(st.sql.upper().split()) else "COPY"
    if st.kind == "utility":
        return None if (st.tag or "").split(" ")[0] in _READ_ONLY_UTILITY else st.tag
    if st.kind not in _READ_ONLY_KINDS:
        return st.tag or st.kind.upper()
    if st.kind == "explain" and "ANALYZE" in st.sql.upper():
        return "EXPLAIN ANALYZE"
    if st.kind == "select":
        writing = sorted(called_functions(st.sql) & _WRITING_FUNCTIONS)
        if writing:
            return f"{writing[0]}()"
    return None


def check(st: Statement, who: Identity | None) -> None:
    """Raise PgError when `who` may not run `st` (no identity or no key: no limits)."""
    if who is None or who.scopes is None:
        return
    if not who.server_files:
        what = file_access(st)
        if what is not None:
            raise PgError(
                "42501",
                f"permission denied: {what} reaches the server's files or extensions; "
                "only admin keys may",
                hint="load data through a client (COPY ... FROM STDIN) or ask an admin",
            )
    if who.sql_read_only:
        what = _writes(st)
        if what is not None:
            raise PgError(
                "25006",
                f"cannot execute {what} in a read-only transaction",
                hint="this API key is read-only (it lacks the query:write scope)",
            )
