"""What an API key may run over SQL, checked per statement before it reaches DuckDB.

- A read-only identity (a key without query:write) changes nothing: SQLSTATE 25006 with
  Postgres' wording, `cannot execute <TAG> in a read-only transaction`. Reads, session
  settings, transaction control, cursors over reads and COPY ... TO pass.
  CREATE TEMP TABLE is refused too, unlike Postgres: a later INSERT / DROP cannot tell a
  temp table from a shared one with the same name (DuckDB resolves temp first), so
  allowing temp objects would mean allowing writes by name; use a CTE or subquery.
- Only server superusers (keyless: trust / configured users) reach outside the database: any
  `Statement.external_access` entry is SQLSTATE 42501. As a second line, the SQL is
  also tokenized by DuckDB itself, so a call the transpiler's tokenizer read differently
  (a string, a comment) is still found.

- A key with allowed_schemas / allowed_tables names only those relations (plus the
  catalog and the agent layer's own functions and views): anything else is SQLSTATE
  42501 naming the relation (rules in proxy/access/table_limits.py).

DuckDB has no per-connection sandbox (enable_external_access is process-wide and
one-way), so this is where the line is drawn. Every statement admitted here is one
query in the key's usage (proxy/access/usage.py).
"""

from __future__ import annotations

import re
from functools import lru_cache

import duckdb
import sqlglot
from sqlglot.errors import SqlglotError

from proxy.access import catalog_reach, org_boundary, ownership, stored_sql
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import REGISTRY
from proxy.wire.errors import PgError
from transpiler import ResetCommand, SetCommand, Statement, TranspileError, transpile
from transpiler.ddl_targets import targets
from transpiler.external_access import of_tokens, outside_function
from transpiler.model import UtilityCommand
from transpiler.relations import Relation
from transpiler.text_cache import text_lru_cache

# Kinds that never change data (SET / RESET of DuckDB options are settings, not data).
_READ_KINDS = frozenset(
    {"select", "show", "set", "reset", "begin", "commit", "rollback", "savepoint", "utility"}
)
# `other` statements that only read: cursors (their query is checked when DECLARE runs
# it), EXECUTE (its PREPARE was checked), USE (the default schema).
_READ_TAGS = frozenset({"DECLARE", "FETCH", "MOVE", "EXECUTE", "USE"})
_ROW_HEADS = frozenset(
    {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "(", "DESCRIBE", "SUMMARIZE", "SHOW"}
    | {"PIVOT", "UNPIVOT"}
)
_WRITING_FUNCTIONS = {"nextval": "nextval()", "setval": "setval()"}
_WRITING_TABLE_FUNCTIONS = {"checkpoint": "CHECKPOINT", "force_checkpoint": "CHECKPOINT"}
_DML_WORDS = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})
_EXPLAIN_ANALYZE = re.compile(
    r"^\s*EXPLAIN\s+ANALY[SZ]E(?:\s+VERBOSE)?(?:\s*\([^)]*\))?\s+", re.IGNORECASE
)
_PREPARE = re.compile(
    r"^\s*PREPARE\s+(?:\"(?:[^\"]|\"\")+\"|\w+)\s*(?:\([^)]*\))?\s*AS\s+", re.IGNORECASE
)
_WORD = re.compile(r'"(?:[^"]|"")*"|[A-Za-z_\x80-\uffff][\w$\x80-\uffff]*')
_READ_ONLY_HINT = "this API key is read-only: it lacks the query:write scope"
_LIMITS_HINT = "this API key may use only its allowed_schemas / allowed_tables"
_ORG_HINT = "a key of another organisation owns it; keys reach their own organisation's tables"
_CATALOG_HINT = (
    "list objects through pg_catalog, information_schema or duckdb_tables() & co., which "
    "show your organisation's"
)
_FILES_HINT = (
    "send data from the client with COPY ... FROM STDIN or INSERT; "
    "server files, extensions and DuckDB-wide settings are for the server's superusers "
    "(a configured user or trust login), not for API keys"
)


def check_all(
    statements: tuple[Statement, ...], who: Identity | None, search_path: str | None = None
) -> None:
    """`check` each statement of a batch, before any of them runs.

    A SET / RESET search_path in the batch adds its schemas to the path later names are
    checked against (added, not replaced: a ROLLBACK may undo the SET), so a name is
    allowed only if it is allowed wherever it could resolve."""
    for st in statements:
        check(st, who, search_path)
        command = st.command
        if isinstance(command, SetCommand | ResetCommand) and (
            command.name is None or command.name.lower() == "search_path"
        ):
            value = getattr(command, "value", None) or "public"
            search_path = f"{search_path or 'public'},{value}"


def check_agent_sql(statements: tuple[Statement, ...], who: Identity | None) -> None:
    """`check_all` for agent functions that run SQL text (branch_query), failing with an
    AgentError (403) so REST and MCP answer it as they answer the function's other errors."""
    try:
        check_all(statements, who)
    except PgError as exc:
        code = "read_only" if exc.sqlstate == "25006" else "permission_denied"
        raise AgentError(
            code, exc.message, sqlstate=exc.sqlstate, http_status=403, hint=exc.hint
        ) from None


def check(st: Statement, who: Identity | None, search_path: str | None = None) -> None:
    """Raise PgError when `who` may not run `st`. No identity (not logged in through
    the server, e.g. in-process tools) or no key: no limits. `search_path` is the
    session's (Postgres form; None: the default), where unqualified names are looked up."""
    if who is None:
        return
    if isinstance(st.command, UtilityCommand) and st.command.targets:
        for relation, _ in st.command.targets:  # VACUUM / ANALYZE t, ...: each is read
            check(transpile(f"SELECT * FROM {relation}")[0], who, search_path)
        return
    if who.limits is not None:
        _check_relations(st, who, search_path)
    if not who.superuser and st.command is None:
        _check_catalog(st.sql, skip=frozenset(call.relation for call in st.agent_calls))
    if not who.superuser and not who.own_database and st.command is None:
        _check_org(st.sql, who, search_path, _changed(st))
        _check_references(st, who, search_path)
        _check_stored(st, who, search_path)
    if not who.server_files:
        what = outside(st)
        if what is not None:
            raise PgError(
                "42501",
                f"permission denied: {what} reads or writes server files; only superusers may",
                hint=_FILES_HINT,
            )
    if who.sql_read_only:
        what = writes(st)
        if what is not None:
            raise PgError(
                "25006",
                f"cannot execute {what} in a read-only transaction",
                hint=_READ_ONLY_HINT,
            )
    if who.meter is not None:
        who.meter.query()


def _check_relations(st: Statement, who: Identity, search_path: str | None) -> None:
    """42501 unless every relation `st` names is within the key's allowed schemas/tables."""
    assert who.limits is not None
    # Session statements (SET search_path too: later names are checked against the new
    # path), cursors (their query is checked at DECLARE), EXECUTE (checked at PREPARE).
    if st.command is not None or (st.kind == "other" and st.tag in _READ_TAGS - {"USE"}):
        return
    sql = st.sql
    if st.tag == "PREPARE":
        match = _PREPARE.match(sql)
        sql = sql[match.end() :] if match else sql
        inner = _transpile_quietly(sql)
        for one in inner or ():
            _check_relations(one, who, search_path)
        if inner is not None:
            return
    skip = frozenset(call.relation for call in st.agent_calls)
    bad = who.limits.refusal(sql, st.kind, st.tag, skip, search_path)
    if bad is not None:
        raise PgError("42501", f"permission denied for {bad}", hint=_LIMITS_HINT)


def _check_org(
    sql: str,
    who: Identity,
    search_path: str | None,
    changed: frozenset[str] | None,
    through: str = "",
) -> None:
    """42501 when `sql` reaches a relation a key of another organisation owns."""
    bad = org_boundary.refusal(sql, who.org_id, ownership.store(), search_path, changed)
    if bad is not None:
        raise PgError("42501", f"permission denied for {bad}{through}", hint=_ORG_HINT)


def _check_catalog(sql: str, through: str = "", skip: frozenset[str] = frozenset()) -> None:
    """42501 for what would list other organisations' objects (catalog_reach.py)."""
    bad = catalog_reach.refusal(sql, _tokens(sql), skip)
    if bad is not None:
        raise PgError("42501", f"permission denied for {bad}{through}", hint=_CATALOG_HINT)


def _check_references(st: Statement, who: Identity, search_path: str | None) -> None:
    """42501 for a FOREIGN KEY to another organisation's table: its rows would tell
    which keys that table holds, and hold back its deletes."""
    ddl = st.constraints
    refs = [a.foreign_key for a in ddl.adds if a.foreign_key] if ddl is not None else []
    rels = [Relation("", (f.ref_schema or "").lower(), f.ref_table.lower()) for f in refs]
    bad = org_boundary.first_foreign(rels, who.org_id, ownership.store(), search_path)
    if bad is not None:
        raise PgError("42501", f"permission denied for {bad}", hint=_ORG_HINT)


def _changed(st: Statement) -> frozenset[str] | None:
    """The names of the objects a DDL statement changes, which the owner checks answer for
    (`must be owner of table t`); None for a statement that changes none."""
    if not ownership.needs_guard(st) or st.kind in ("insert", "update", "delete", "merge", "copy"):
        return None
    names = set()
    for t in ownership.server_ddl_targets(st) or targets(st.sql) or ():
        names.add(t.name)
        if t.on_table is not None:
            names.add(t.on_table[2])
    return frozenset(names)


def _check_stored(st: Statement, who: Identity, search_path: str | None) -> None:
    """The same checks on what the statement's views and macros resolve to: a view over
    read_csv(), or over a table outside the key's limits or its organisation, reaches no
    more than the key."""
    for d in stored_sql.through(_words(st.sql)):
        through = f" (through {d.kind} {d.name})"
        _check_catalog(d.query, through)
        _check_org(d.query, who, search_path, None, through)
        if not who.server_files:
            what = _outside_text(d.query)
            if what is not None:
                raise PgError(
                    "42501",
                    f"permission denied: {what}{through} reads or writes server files; "
                    "only superusers may",
                    hint=_FILES_HINT,
                )
        if who.limits is not None:
            bad = who.limits.refusal(d.query, "select", "SELECT", frozenset(), search_path)
            if bad is not None:
                raise PgError("42501", f"permission denied for {bad}{through}", hint=_LIMITS_HINT)


@text_lru_cache(maxsize=4096)  # every statement's text: long ones are not kept
def _words(sql: str) -> frozenset[str]:
    """The names and keywords of `sql`, lower case: which views or macros it may use."""
    return frozenset(text.lower() for text, kind, _ in _tokens(sql) if kind != "operator")


@lru_cache(maxsize=2048)
def _outside_text(sql: str) -> str | None:
    """What in stored DuckDB SQL reaches outside the database (calls, file-named tables)."""
    for name in _calls(sql):
        if outside_function(name):
            return f"{name.lower()}()"
    try:
        found = of_tokens(sqlglot.tokenize(sql, read="duckdb"))
    except SqlglotError:
        return "SQL that cannot be checked"
    return found[0] if found else None


def _transpile_quietly(sql: str) -> tuple[Statement, ...] | None:
    try:
        return transpile(sql)
    except TranspileError:
        return None


def outside(st: Statement) -> str | None:
    """The first thing in `st` that reaches outside the database, or None."""
    if st.external_access:
        return st.external_access[0]
    for name in _calls(st.sql):
        if outside_function(name):
            return f"{name}()"
    return None


def writes(st: Statement) -> str | None:
    """Why `st` would change data, as a Postgres command tag, or None when it only reads."""
    for call in st.agent_calls:
        fn = REGISTRY.get(call.name) if call.name in REGISTRY else None
        if fn is None or fn.writes:
            return f"{call.name}()"
    kind = st.kind
    if kind == "explain":
        return _explain_analyze(st.sql)
    if kind == "copy":
        if _copy_direction(st.sql) != "TO":
            return "COPY FROM"
        return _query_writes(st.sql, statement=False)  # COPY (query) TO: the query
    if kind == "ddl":
        return "CREATE TABLE AS" if st.tag == "SELECT" else st.tag
    if kind == "other":
        if st.tag == "PREPARE":
            return _inner_writes(_PREPARE, st.sql)
        return None if st.tag in _READ_TAGS else st.tag
    if kind == "dml_cte":  # DML in WITH: named by the DML, as PostgreSQL does
        return _query_writes(st.sql) or st.tag
    if kind not in _READ_KINDS:
        return st.tag or kind.upper()
    if kind == "select":
        return _query_writes(st.sql)
    return None


def _explain_analyze(sql: str) -> str | None:
    """EXPLAIN ANALYZE runs its statement; plain EXPLAIN only plans it."""
    return _inner_writes(_EXPLAIN_ANALYZE, sql)


def _inner_writes(prefix: re.Pattern[str], sql: str) -> str | None:
    match = prefix.match(sql)
    if match is None:
        return None if prefix is _EXPLAIN_ANALYZE else "PREPARE"
    try:
        inner = transpile(sql[match.end() :])
    except TranspileError:
        return "PREPARE" if prefix is _PREPARE else "EXPLAIN ANALYZE"
    for st in inner:
        what = writes(st)
        if what is not None:
            return what
    return None


def _query_writes(sql: str, *, statement: bool = True) -> str | None:
    """A row-returning statement that still writes: SELECT INTO (DuckDB gets CREATE
    TABLE AS), sequence functions, checkpoints, data-modifying CTEs."""
    tokens = _tokens(sql)
    if statement and tokens and tokens[0][1] != "identifier" and tokens[0][0] not in _ROW_HEADS:
        return "SELECT INTO" if tokens[0][0] == "CREATE" else tokens[0][0]
    for name in _calls(sql):
        low = name.lower()
        if low in _WRITING_FUNCTIONS:
            return _WRITING_FUNCTIONS[low]
        if low in _WRITING_TABLE_FUNCTIONS:
            return _WRITING_TABLE_FUNCTIONS[low]
    previous = ""
    for text, kind, _ in tokens:
        if kind != "keyword":
            previous = ""
            continue
        if text in _DML_WORDS and not (text == "UPDATE" and previous in ("FOR", "NO")):
            return text
        previous = text
    return None


def _copy_direction(sql: str) -> str:
    """FROM or TO: the first of them outside parentheses (COPY (query) TO ...)."""
    for text, kind, depth in _tokens(sql)[1:]:
        if depth == 0 and kind == "keyword" and text in ("FROM", "TO"):
            return text
    return "FROM"


@text_lru_cache(maxsize=4096)  # every statement's text: long ones are not kept
def _tokens(sql: str) -> tuple[tuple[str, str, int], ...]:
    """DuckDB's own tokens of `sql`: (text, type, parenthesis depth). Keywords and
    unquoted identifiers upper-cased, quoted identifiers as written; strings, numbers
    and comments leave their text out."""
    out: list[tuple[str, str, int]] = []
    depth = 0
    try:
        tokens = duckdb.tokenize(sql)
    except (duckdb.Error, RuntimeError):
        return ()
    for offset, token_type in tokens:
        kind = token_type.name
        if kind == "operator":
            ch = sql[offset]
            if ch == ")":
                depth -= 1
            out.append((ch, kind, depth))
            if ch == "(":
                depth += 1
        elif kind in ("keyword", "identifier"):
            match = _WORD.match(sql, offset)
            text = match.group(0) if match else sql[offset]
            text = text[1:-1].replace('""', '"') if text.startswith('"') else text.upper()
            out.append((text, kind, depth))
        else:
            out.append(("", kind, depth))
    return tuple(out)


def _calls(sql: str) -> list[str]:
    """Every `name (` in `sql` as DuckDB tokenizes it."""
    tokens = _tokens(sql)
    return [
        text
        for (text, kind, _), nxt in zip(tokens, tokens[1:], strict=False)
        if kind in ("keyword", "identifier") and nxt[0] == "(" and nxt[1] == "operator"
    ]
