"""Statements inside a branch: which are allowed, which tables they write, what to copy first.

Statement analysis is done on sqlglot trees of the (transpiled) DuckDB text; see
`proxy.agent.branches.service` for the rules it enforces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from proxy.agent.branches.copy import base_tables, branchable
from proxy.core.errors import AgentError
from proxy.core.names import INTERNAL_SCHEMA

SCHEMA_PREFIX = "branch_"
WRITE_WORDS = frozenset(
    {"INSERT", "UPDATE", "DELETE", "MERGE", "ALTER", "TRUNCATE", "CREATE", "DROP", "COPY"}
)
# Statement kinds (transpiler) allowed inside branch_query.
_QUERY_KINDS = frozenset({"select", "insert", "update", "delete", "merge", "ddl", "explain"})


def db_error(exc: Exception, sql: str | None = None) -> AgentError:
    """A DuckDB failure inside a branch as an AgentError with the Postgres SQLSTATE."""
    from proxy.db.duckdb_errors import map_duckdb_error

    pg = map_duckdb_error(exc, sql)
    code = {"23": "constraint_violation", "40": "conflict", "42": "invalid_sql"}.get(
        pg.sqlstate[:2], "query_failed"
    )
    status = {"40": 409, "23": 409, "57": 408}.get(pg.sqlstate[:2], 422)
    return AgentError(code, pg.message, sqlstate=pg.sqlstate, http_status=status, hint=pg.detail)


def refused(message: str) -> AgentError:
    return AgentError("not_supported", message, sqlstate="0A000", http_status=422)


@dataclass
class CopyPlan:
    """What a statement needs before it runs: tables to copy from main into the branch."""

    copy: list[str] = field(default_factory=list)  # main table names


def _name(table: exp.Table) -> tuple[str | None, str | None, str]:
    return (table.catalog or None, table.db or None, table.name)


def _targets(tree: exp.Expr) -> tuple[list[tuple[exp.Table, bool]], list[exp.Table], bool]:
    """(written, dropped, renames): the objects a statement changes. `written` pairs each
    target with whether its data changes (so a view over main must become a copy first);
    CREATE VIEW / SEQUENCE / MACRO / TYPE only create a new name."""
    written: list[tuple[exp.Table, bool]] = []
    dropped: list[exp.Table] = []
    renames = False

    def table_of(node: exp.Expr | None) -> exp.Table | None:
        if isinstance(node, exp.Schema):
            node = node.this
        return node if isinstance(node, exp.Table) else None

    for node in tree.walk():
        if isinstance(node, exp.Insert | exp.Update | exp.Delete | exp.Merge):
            if (t := table_of(node.this)) is not None:
                written.append((t, True))
        elif isinstance(node, exp.Alter):
            if (t := table_of(node.this)) is not None:
                written.append((t, True))
            renames = renames or any(isinstance(a, exp.AlterRename) for a in node.actions)
        elif isinstance(node, exp.TruncateTable):
            written.extend((t, True) for t in node.expressions if isinstance(t, exp.Table))
        elif isinstance(node, exp.Create):
            kind = (node.args.get("kind") or "").upper()
            if kind == "INDEX" and isinstance(node.this, exp.Index):
                if (t := table_of(node.this.args.get("table"))) is not None:
                    written.append((t, True))
            elif kind in ("TABLE", "VIEW", "SEQUENCE", "MACRO", "TYPE"):
                target = node.this.this if isinstance(node.this, exp.UserDefinedFunction) else None
                if (t := table_of(target or node.this)) is not None:
                    written.append((t, kind == "TABLE"))
        elif isinstance(node, exp.Drop):
            dropped.extend(t for t in node.args.get("tables") or [] if isinstance(t, exp.Table))
        elif isinstance(node, exp.Comment) and (t := table_of(node.this)) is not None:
            written.append((t, True))
        elif isinstance(node, exp.Reference) and (t := table_of(node.this)) is not None:
            # A FOREIGN KEY of a new table: DuckDB needs its target in the same schema, so a
            # view over main is copied first (the target's data itself is not changed).
            written.append((t, True))
    return written, dropped, renames


def _is_temporary(tree: exp.Expr) -> bool:
    for node in tree.find_all(exp.Create):
        props = node.args.get("properties")
        if props is not None and props.find(exp.TemporaryProperty) is not None:
            return True
    return False


def parse_statement(sql: str) -> exp.Expr | None:
    """The DuckDB statement as a sqlglot tree; None when sqlglot cannot represent it."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (ParseError, TokenError):
        return None
    return None if isinstance(tree, exp.Command) else tree


def first_word(sql: str) -> str:
    stripped = re.sub(r"^(\s|--[^\n]*\n|/\*.*?\*/)+", "", sql, flags=re.S)
    return (stripped.split(None, 1) or [""])[0].upper().rstrip("(;")


_FOREIGN = re.compile(rf"{INTERNAL_SCHEMA}|{SCHEMA_PREFIX}[0-9a-f]{{32}}", re.I)


def check_text(statements: Any, schema: str) -> None:
    """Belt and braces over the tree checks: also catches names inside strings (query(),
    query_table()) and statements sqlglot cannot parse."""
    for st in statements:
        for match in _FOREIGN.finditer(st.sql):
            if match.group(0).lower() != schema:
                raise AgentError.not_found(f"schema {match.group(0)!r} does not exist")


def plan_statement(
    cur: duckdb.DuckDBPyConnection,
    schema: str,
    tree: exp.Expr,
    *,
    strict: bool,
    copied: set[str],
) -> CopyPlan:
    """Check a statement against the branch rules and list the tables to copy first.

    strict (branch_query): writes must stay inside the branch, no reads of other branches or
    the internal schema, no TEMP objects. Not strict (wire helper): only the copy-on-write and
    the drop/rename guards, since the wire session chose its own search_path.
    """
    plan = CopyPlan()
    own = schema.lower()
    written, dropped, renames = _targets(tree)
    if strict:
        if _is_temporary(tree):
            raise refused("TEMP objects are not allowed inside a branch")
        for table in tree.find_all(exp.Table):
            db = (table.db or "").lower()
            if db == INTERNAL_SCHEMA or (db.startswith(SCHEMA_PREFIX) and db != own):
                raise AgentError.not_found(f"schema {table.db!r} does not exist")
    branch_tables = base_tables(cur, schema)
    main_tables = branchable(cur)

    def in_branch(table: exp.Table) -> bool:
        catalog, db, _ = _name(table)
        if catalog is not None and strict:
            raise refused("three-part names are not allowed inside a branch")
        if db is None:
            return True
        if db.lower() == own:
            return True
        if strict:
            raise AgentError.forbidden(
                f"branch_query writes only inside its branch, not to {db}.{table.name}"
            )
        return False

    for table in dropped:
        if not in_branch(table):
            continue
        low = table.name.lower()
        if low in main_tables or low in copied:
            raise refused(
                f"cannot drop {table.name} inside a branch: it is a table of main "
                "(discard the branch, or merge and drop it in main)"
            )
    for table, copy in written:
        if not in_branch(table):
            continue
        low = table.name.lower()
        if renames and (low in main_tables or low in copied):
            raise refused(f"cannot rename {table.name} inside a branch: it is a table of main")
        if low in branch_tables:
            continue  # already a real table of the branch
        if low in main_tables and copy and main_tables[low] not in plan.copy:
            # A view over main (or a main table created after branching): copy it first.
            plan.copy.append(main_tables[low])
    return plan


def vet_statements(statements: Any) -> list[tuple[Any, exp.Expr | None]]:
    """branch_query's transpiled statements, each with its sqlglot tree (None for EXPLAIN,
    or a SELECT sqlglot cannot represent); raises for statements not allowed in a branch."""
    prepared: list[tuple[Any, exp.Expr | None]] = []
    for st in statements:
        if st.kind not in _QUERY_KINDS:
            try:  # report a syntax error as one, not as "not allowed"
                duckdb.extract_statements(st.sql)
            except duckdb.ParserException as exc:
                raise db_error(exc, st.sql) from None
            raise refused(f"{st.tag} is not allowed inside branch_query")
        if st.agent_calls:
            raise refused("agent functions cannot be called inside branch_query")
        if st.bind_texts:
            raise refused("semantic search functions are not supported inside branch_query")
        if st.kind == "explain":
            if re.match(r"\s*EXPLAIN\s+ANALY[SZ]E", st.sql, re.I):
                raise refused("EXPLAIN ANALYZE is not allowed inside branch_query")
            prepared.append((st, None))
            continue
        tree = parse_statement(st.sql)
        if tree is None and st.kind != "select":
            raise refused(f"cannot tell which tables this {st.tag} writes")
        prepared.append((st, tree))
    return prepared
