"""Running a branch_query's statements inside the branch's schema."""

from __future__ import annotations

from typing import Any

import duckdb
from sqlglot import exp

from proxy.agent.branches import wire as branch_wire
from proxy.agent.branches.result import result_rows
from proxy.agent.branches.sql import db_error, plan_statement
from proxy.agent.branches.store import record_copies


def run_statements(
    cur: duckdb.DuckDBPyConnection,
    branch: dict[str, Any],
    prepared: list[tuple[Any, exp.Expr | None]],
) -> list[dict[str, Any]]:
    """Run a branch_query's vetted statements in the branch (copying on first write each
    table a statement writes) and record the copies; the rows of the last statement."""
    schema = branch["schema_name"]
    copied: list[dict] = list(branch["tables_copied"])
    new: list[dict] = []
    rows: list[dict[str, Any]] = []
    for st, tree in prepared:
        if tree is not None:
            names = {c["table"].lower() for c in copied + new}
            plan = plan_statement(cur, schema, tree, strict=True, copied=names)
            for table in plan.copy:
                try:
                    new.extend(branch_wire.copy_into(cur, schema, table))
                except duckdb.Error as exc:
                    raise db_error(exc) from None
        try:
            cur.on_users(st.sql)  # the client's SQL: never routed by its text
            rows = result_rows(cur, st, tree)
        except duckdb.Error as exc:
            raise db_error(exc, st.sql) from None
    record_copies(cur, schema, copied, new)
    return rows
