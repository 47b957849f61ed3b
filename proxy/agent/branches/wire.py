"""Copy-on-write for wire sessions that write in a branch via `SET search_path`.

Also the one place that copies a table of main into a branch together with its
snapshot (`copy_into`), for branch_query, branch_create's `tables` and the wire.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from proxy.agent.branches.copy import atomic, copy_group
from proxy.agent.branches.sql import (
    WRITE_WORDS,
    first_word,
    parse_statement,
    plan_statement,
    refused,
)
from proxy.agent.branches.stats import snapshot
from proxy.agent.branches.store import TABLE, copied_list, record_copies
from proxy.core.errors import AgentError
from proxy.core.identity import Identity


def copy_into(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[dict[str, Any]]:
    """Replace the branch's view of main.table by a copy, with the tables linked to it by
    foreign keys (branch_copy.copy_group), each fingerprinted for diff/conflicts; returns
    their tables_copied entries ([] when already copied)."""

    def work() -> list[dict[str, Any]]:
        out = []
        for name, kept in copy_group(cur, schema, table):
            entry = {"table": name, "kept": kept, "copied_at": dt.datetime.now(dt.UTC).isoformat(),
                     "snapshot": snapshot(cur, schema, name)}  # fmt: skip
            if name.lower() != table.lower():
                entry["copied_for"] = table  # linked to it by a foreign key
            out.append(entry)
        return out

    return atomic(cur, work)


def prepare_write(
    cur: duckdb.DuckDBPyConnection,
    schema_name: str,
    statement_sql: str,
    who: Identity | None = None,
) -> list[str]:
    """Copy-on-write for a wire session whose search_path starts with a branch schema.

    Call it on the session's own cursor (worker thread), just before running the DuckDB
    text `statement_sql` (one transpiled statement), inside the statement's transaction
    if there is one. It returns the main tables it copied into the branch (usually []),
    after which the statement can run as written. `schema_name` that is not a branch:
    returns [] (nothing to do). Raises AgentError when the branch is not active (or not
    `who`'s, when given), for DROP/RENAME of a table of main inside the branch, and for a
    write statement whose targets sqlglot cannot determine. Writes qualified with another
    schema (e.g. main.t) are left alone: the session asked for them explicitly.
    """
    row = cur.execute(
        f"SELECT branch_id, org_id, agent_id, status, expires_at, tables_copied "
        f"FROM {TABLE} WHERE schema_name = ?",
        [schema_name.lower()],
    ).fetchone()
    if row is None:
        return []
    bid, org, agent, status, expires_at, raw_copied = row
    if who is not None and (who.org_id, who.agent_id) != (org, agent):
        raise AgentError.not_found(f"branch {bid} does not exist")
    if status != "active" or expires_at <= dt.datetime.now(dt.UTC):
        raise AgentError.conflict(f"branch {bid} is {status}: it can no longer be used")
    tree = parse_statement(statement_sql)
    if tree is None:
        if first_word(statement_sql) in WRITE_WORDS:
            raise refused("cannot tell which tables this statement writes in a branch")
        return []
    copied = copied_list(raw_copied)
    names = {c["table"].lower() for c in copied}
    schema = schema_name.lower()
    plan = plan_statement(cur, schema, tree, strict=False, copied=names)
    if not plan.copy:
        return []

    def work() -> list[dict[str, Any]]:  # copies and their record: all or nothing
        new = [entry for table in plan.copy for entry in copy_into(cur, schema, table)]
        record_copies(cur, schema, copied, new)
        return new

    return [c["table"] for c in atomic(cur, work)]
