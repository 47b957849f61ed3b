"""What in a statement reaches outside the database: server files, URLs, extensions,
process-wide DuckDB settings, or SQL text run unchecked.

DuckDB has no per-connection sandbox (enable_external_access is global and one-way),
so the proxy decides per statement, on this list (see proxy/access/sql_policy.py). Every
entry names the construct for the error message, e.g. "read_csv()", "COPY TO a file",
"table 'd.csv'", "ATTACH", "SET threads".

Three sources, so that nothing DuckDB will see goes unchecked:
- the statement's first words (ATTACH, COPY ... TO 'file', CREATE SECRET, SET x, ...);
- for parsed statements, the DuckDB tree: every function call by name (quoting, case,
  schema qualification and nesting do not matter) and every table named like a file;
- for pass-through text (no tree), the tokens DuckDB will parse: `name (` calls and
  strings / path-like names after FROM, JOIN, a FROM-list comma, DESCRIBE, SUMMARIZE.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from transpiler.model import Command, ResetCommand, SetCommand
from transpiler.treeutil import nodes as tree_nodes

# Table functions that read or list files or URLs (DuckDB core, parquet, json and the
# extensions DuckDB can autoload: excel, delta, iceberg, spatial, sqlite/postgres/mysql
# scanners, avro, ducklake, lance, vortex).
FILE_FUNCTIONS: frozenset[str] = frozenset(
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
        "parquet_full_metadata",
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
        "read_duckdb",
        "glob",
        "read_xlsx",
        "read_avro",
        "read_lance",
        "read_vortex",
        "delta_scan",
        "iceberg_scan",
        "iceberg_metadata",
        "iceberg_snapshots",
        "st_read",
        "st_read_meta",
        "st_readosm",
        "st_readshp",
        "st_drivers",
        "sqlite_scan",
        "sqlite_attach",
        "sqlite_query",
        "postgres_scan",
        "postgres_scan_pushdown",
        "postgres_attach",
        "postgres_query",
        "postgres_execute",
        "mysql_scan",
        "mysql_query",
        "mysql_execute",
        "ducklake_snapshots",
        "ducklake_table_info",
        "load_aws_credentials",
        "duckdb_temporary_files",
        "duckdb_external_file_cache",
        "duckdb_logs",
        "duckdb_logs_parsed",
        "truncate_duckdb_logs",
        "duckdb_secrets",
        "which_secret",
        "add_parquet_key",
    }
)
# Table functions that run SQL given as text, or scan raw memory addresses: what they
# would read cannot be checked here.
UNCHECKED_FUNCTIONS: frozenset[str] = frozenset(
    {
        "query",
        "query_table",
        "json_execute_serialized_sql",
        "arrow_scan",
        "arrow_scan_dumb",
        "pandas_scan",
        "python_map_function",
    }
)
# Pragma functions callable in FROM that switch process-wide state (profiling output
# files, logging, checkpointing, verification): enable_profiling(), disable_optimizer()...
PRAGMA_PREFIXES = ("enable_", "disable_", "verify_")
OUTSIDE_FUNCTIONS = FILE_FUNCTIONS | UNCHECKED_FUNCTIONS

# A table name DuckDB reads as a file (its replacement scans): `FROM d.csv` works
# unquoted when schema d does not exist, and `FROM x.db` opens a database file.
FILE_EXTENSIONS: frozenset[str] = frozenset(
    {
        "csv", "tsv", "txt", "tbl", "dat", "parquet", "parq", "json", "jsonl", "ndjson",
        "gz", "gzip", "zst", "zstd", "bz2", "xz", "lz4", "snappy", "br", "zip",
        "db", "duckdb", "ddb", "sqlite", "sqlite3", "xlsx", "xls", "arrow", "ipc",
        "feather", "avro", "orc", "lance", "vortex", "shp", "gpkg", "geojson", "fgb",
        "kml", "osm", "pbf",
    }
)  # fmt: skip
_PATH_CHARS = frozenset("/\\:*?~[]{}")

# Postgres session settings proxy/pgserver/settings.py answers itself (DEFAULTS, lower case):
# SET / RESET of any other name goes to DuckDB, whose options are process-wide.
# tests/test_sql_policy.py keeps this list equal to proxy.pgserver.settings.DEFAULTS.
PG_SESSION_SETTINGS: frozenset[str] = frozenset(
    {
        "server_version", "server_version_num", "server_encoding", "client_encoding",
        "application_name", "datestyle", "timezone", "integer_datetimes",
        "standard_conforming_strings", "is_superuser", "intervalstyle",
        "session_authorization", "default_transaction_read_only", "in_hot_standby",
        "extra_float_digits", "search_path", "statement_timeout", "lock_timeout",
        "idle_in_transaction_session_timeout", "transaction_isolation",
        "default_transaction_isolation", "transaction_read_only", "max_identifier_length",
        "lc_messages", "lc_monetary", "lc_numeric", "lc_time", "bytea_output",
        "client_min_messages", "synchronous_commit", "max_connections", "block_size",
        "jit", "row_security", "escape_string_warning", "backslash_quote", "geqo",
        "work_mem", "log_statement", "log_min_duration_statement",
    }
)  # fmt: skip
# SET forms the transpiler turns into commands the server handles itself.
_SERVER_SETTINGS = frozenset({"transaction_characteristics"})

_STATEMENTS = {
    "ATTACH": "ATTACH",
    "DETACH": "DETACH",
    "INSTALL": "INSTALL",
    "LOAD": "LOAD",
    "PRAGMA": "PRAGMA",
    "CALL": "CALL",
    "EXPORT": "EXPORT DATABASE",
    "IMPORT": "IMPORT DATABASE",
}
STRING_TOKENS = frozenset(
    {
        TokenType.STRING,
        TokenType.HEREDOC_STRING,
        TokenType.BYTE_STRING,
        TokenType.NATIONAL_STRING,
        TokenType.RAW_STRING,
        TokenType.UNICODE_STRING,
    }
)
_STRINGS = STRING_TOKENS
_NAMES = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
# Words after which a table name follows in pass-through text.
_TABLE_WORDS = frozenset({"FROM", "JOIN", "DESCRIBE", "SUMMARIZE", "PIVOT", "UNPIVOT", "SHOW"})
# Clause words that end a FROM list (a comma after them is no longer a table separator).
_CLAUSE_WORDS = frozenset(
    {"WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "QUALIFY", "WINDOW", "SELECT", "ON",
     "USING", "UNION", "EXCEPT", "INTERSECT", "RETURNING", "SET", "VALUES", "OFFSET"}
)  # fmt: skip


def outside_function(name: str) -> bool:
    """Whether calling `name` (any case, without schema) reaches outside the database."""
    low = name.lower()
    return low in OUTSIDE_FUNCTIONS or low.startswith(PRAGMA_PREFIXES)


def file_like(name: str, quoted: bool = True) -> bool:
    """Whether DuckDB could take the table name `name` (parts joined by dots) for a file.
    Quoted names and strings count with any dot or path character; unquoted dotted names
    only with a file extension at the end (`d.csv`), since `schema.table` is normal."""
    if not _PATH_CHARS.isdisjoint(name):
        return True
    if "." not in name:
        return False
    return quoted or name.rsplit(".", 1)[1].lower() in FILE_EXTENSIONS


def of_command(command: Command | None, kind: str, tokens: Sequence[Token]) -> tuple[str, ...]:
    """SET / RESET: only the Postgres session settings stay inside the server."""
    if isinstance(command, SetCommand):
        name = command.name.lower()
        return () if _session_setting(name) else (f"SET {command.name}",)
    if isinstance(command, ResetCommand):
        if command.name is None:  # RESET ALL resets the session's own settings
            return ()
        name = command.name.lower()
        return () if _session_setting(name) else (f"RESET {command.name}",)
    if kind == "set" and command is None:
        # Text the server hands to DuckDB as written; only SET VARIABLE is session-local.
        words = [t.text.upper() for t in tokens[:2]]
        if words[1:2] == ["VARIABLE"]:
            return _dedupe(_token_functions(tokens))
        return ("SET",)
    return ()


def _session_setting(name: str) -> bool:
    return (
        name in PG_SESSION_SETTINGS
        or name in _SERVER_SETTINGS
        or "." in name
        or name.startswith("hatidata_")
    )


def of_tree(
    tree: exp.Expr, tokens: Sequence[Token], worth_walking: bool | None = None
) -> tuple[str, ...]:
    """A parsed statement: its first words, then its DuckDB tree (when the tokens show
    anything that could matter, so most statements skip the walk). `worth_walking`:
    that test's answer when already known (transpiler.token_flags computes it in its pass)."""
    found = _statement_words(tokens)
    if worth_walking is None:
        worth_walking = _worth_walking(tokens)
    if not worth_walking:
        return _dedupe(found)
    for node in tree_nodes(tree):
        if isinstance(node, exp.Func):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            if name and outside_function(name):
                found.append(f"{name.lower()}()")
        elif isinstance(node, exp.Table):
            entry = _tree_table(node)
            if entry:
                found.append(entry)
    return _dedupe(found)


def of_tokens(tokens: Sequence[Token]) -> tuple[str, ...]:
    """Pass-through text: first words, `name (` calls, file-named tables."""
    tokens = _expand(tokens)
    if tokens is None:
        return ("SQL that cannot be checked",)
    return _dedupe(_statement_words(tokens) + _token_functions(tokens) + _token_tables(tokens))


def _expand(tokens: Sequence[Token]) -> Sequence[Token] | None:
    """The tokenizer hands back the rest of a "command" (PREPARE, DECLARE, CALL, DO,
    EXECUTE, ...) as one string: tokenize that text too, as DuckDB will parse it."""
    from sqlglot.errors import TokenError

    from transpiler.dialects import POSTGRES

    if len(tokens) != 2 or tokens[0].token_type not in POSTGRES.tokenizer_class.COMMANDS:
        return tokens
    if tokens[1].token_type is not TokenType.STRING:
        return tokens
    try:
        return [tokens[0], *POSTGRES.tokenize(tokens[1].text)]
    except TokenError:
        return None


def _dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _statement_words(tokens: Sequence[Token]) -> list[str]:
    words = [t.text.upper() for t in tokens[:6] if t.token_type not in _STRINGS]
    if not words:
        return []
    head = words[0]
    if head == "EXPLAIN":  # EXPLAIN [ANALYZE] [VERBOSE] <statement> runs the statement
        rest = list(tokens[1:])
        while rest and rest[0].text.upper() in ("ANALYZE", "ANALYSE", "VERBOSE"):
            rest = rest[1:]
        return _statement_words(rest)
    if head == "PREPARE":  # PREPARE name [(types)] AS <statement>
        at = next((i for i, t in enumerate(tokens) if t.token_type is TokenType.ALIAS), None)
        return _statement_words(tokens[at + 1 :]) if at is not None else []
    if head in _STATEMENTS:
        return [_STATEMENTS[head]]
    if head == "FORCE" and words[1:2] == ["INSTALL"]:
        return ["INSTALL"]
    if head == "UPDATE" and words[1:2] == ["EXTENSIONS"]:
        return ["UPDATE EXTENSIONS"]
    if head in ("CREATE", "DROP") and _secret(words[1:]):
        return [f"{head} SECRET"]
    if head == "COPY":
        return _copy(tokens)
    return []


def _secret(words: list[str]) -> bool:
    """CREATE [OR REPLACE] [PERSISTENT | TEMP[ORARY]] SECRET: the object kind, not a table
    that happens to be called secret."""
    rest = words[2:] if words[:2] == ["OR", "REPLACE"] else words
    rest = rest[1:] if rest[:1] in (["PERSISTENT"], ["TEMP"], ["TEMPORARY"]) else rest
    return rest[:1] == ["SECRET"]


def _copy(tokens: Sequence[Token]) -> list[str]:
    """COPY ... FROM STDIN / TO STDOUT stay on the connection; anything else is a file
    (or COPY FROM DATABASE, which copies between attached databases)."""
    depth = 0
    for i, token in enumerate(tokens[1:], 1):
        tt = token.token_type
        if tt is TokenType.L_PAREN:
            depth += 1
        elif tt is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.text.upper() in ("FROM", "TO"):
            direction = token.text.upper()
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and nxt.token_type not in _STRINGS:
                word = nxt.text.upper()
                if (direction, word) in (("FROM", "STDIN"), ("TO", "STDOUT")):
                    return []
                if word == "DATABASE":
                    return ["COPY FROM DATABASE"]
            return [f"COPY {direction} a file"]
    return ["COPY"]


def _worth_walking(tokens: Sequence[Token]) -> bool:
    prev: Token | None = None
    for token in tokens:
        tt = token.token_type
        text = token.text
        if tt in _STRINGS or tt is TokenType.IDENTIFIER:
            if file_like(text) or (tt is TokenType.IDENTIFIER and outside_function(text)):
                return True
        elif outside_function(text):
            return True
        after_dot = prev is not None and prev.token_type is TokenType.DOT
        if after_dot and tt in _NAMES and text.lower() in FILE_EXTENSIONS:
            return True
        prev = token
    return False


def _tree_table(node: exp.Table) -> str | None:
    this = node.this
    if isinstance(this, exp.Literal) and this.is_string:
        return f"table '{this.name}'"
    if not isinstance(this, exp.Identifier):
        return None
    parts = [p for p in node.parts if isinstance(p, exp.Identifier)]
    name = ".".join(p.name for p in parts)
    # A quoted part is a file name when it has a dot itself ("d.csv"); the dots that join
    # `"schema".table` are not. Unquoted parts read as a file only with an extension (d.csv).
    if any(p.quoted and file_like(p.name) for p in parts) or file_like(name, quoted=False):
        return f"table '{name}'"
    return None


def _token_functions(tokens: Sequence[Token]) -> list[str]:
    found = []
    for token, nxt in zip(tokens, tokens[1:], strict=False):
        if (
            nxt.token_type is TokenType.L_PAREN
            and token.token_type not in _STRINGS
            and outside_function(token.text)
        ):
            found.append(f"{token.text.lower()}()")
    return found


def _token_tables(tokens: Sequence[Token]) -> list[str]:
    """Tables named like files after FROM / JOIN / DESCRIBE / ..., and after a comma in
    a FROM list, tracked per parenthesis depth."""
    found = []
    in_from: list[bool] = [False]
    for i, token in enumerate(tokens):
        tt = token.token_type
        word = token.text.upper() if tt not in _STRINGS and tt is not TokenType.IDENTIFIER else ""
        if tt is TokenType.L_PAREN:
            in_from.append(False)
            continue
        if tt is TokenType.R_PAREN:
            if len(in_from) > 1:
                in_from.pop()
            continue
        starts = word in _TABLE_WORDS or (tt is TokenType.COMMA and in_from[-1])
        if word in _TABLE_WORDS:
            in_from[-1] = word in ("FROM", "JOIN")
        elif word in _CLAUSE_WORDS:
            in_from[-1] = False
        if starts:
            entry = _token_table(tokens, i + 1)
            if entry:
                found.append(entry)
    return found


def _token_table(tokens: Sequence[Token], i: int) -> str | None:
    if i >= len(tokens):
        return None
    first = tokens[i]
    if first.token_type in _STRINGS:
        return f"table '{first.text}'"
    parts: list[str] = []
    quoted = False
    while i < len(tokens) and tokens[i].token_type in _NAMES:
        parts.append(tokens[i].text)
        # a quoted part holding a dot ("d.csv") is a file name; main."secret" is not
        quoted |= tokens[i].token_type is TokenType.IDENTIFIER and "." in tokens[i].text
        if i + 1 < len(tokens) and tokens[i + 1].token_type is TokenType.DOT:
            i += 2
        else:
            break
    name = ".".join(parts)
    if name and file_like(name, quoted=quoted):
        return f"table '{name}'"
    return None
