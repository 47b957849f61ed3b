"""Argument checks of the branch operations: branch ids or names, and branch_create's `tables`."""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from typing import Any

import duckdb

from proxy.agent.branches.sql import SCHEMA_PREFIX
from proxy.agent.branches.store import TABLE
from proxy.core.errors import AgentError

_ID = re.compile(r"^[0-9a-f]{32}$")


def id_form(branch_id: str) -> str | None:
    """The 32-hex id that `branch_id` spells (the id, its UUID form or the schema name), or
    None when it spells none."""
    text = branch_id.strip().lower()
    if text.startswith(SCHEMA_PREFIX):
        text = text[len(SCHEMA_PREFIX) :]
    with contextlib.suppress(ValueError):
        text = uuid.UUID(text).hex
    return text if _ID.match(text) else None


def resolve(cur: duckdb.DuckDBPyConnection, branch: Any, scope: str, params: list[Any]) -> str:
    """The id of the branch `branch` names, among the branches `scope` (SQL over the branches
    table, with `params`) selects: its id (32 hex digits, the UUID form or the schema name)
    or its name.

    Names are not unique: a name used again after its branch ended is common. So a name
    picks its one active branch; with none active, its only branch. Several candidates are
    an invalid argument listing their ids; no branch at all is not found."""
    if not isinstance(branch, str) or not branch.strip():
        raise AgentError.invalid("branch_id must be a non-empty string (a branch id or name)")
    bid = id_form(branch)
    if bid is not None:
        found = cur.execute(
            f"SELECT 1 FROM {TABLE} WHERE branch_id = ? AND {scope}", [bid, *params]
        ).fetchone()
        if found is not None:
            return bid
    name = branch.strip()  # branch_create strips names
    rows = cur.execute(
        f"SELECT branch_id, status FROM {TABLE} WHERE name = ? AND {scope} "
        "ORDER BY created_at, branch_id",
        [name, *params],
    ).fetchall()
    active = [r for r in rows if r[1] == "active"]
    candidates = active or rows
    if len(candidates) == 1:
        return candidates[0][0]
    if not candidates:
        raise AgentError.not_found(f"branch {branch!r} does not exist")
    which = "active branches" if active else "branches"
    ids = ", ".join(r[0] for r in candidates)
    raise AgentError.invalid(
        f"branch name {name!r} is ambiguous: {len(candidates)} {which} have it ({ids})",
        hint="pass the branch_id of the one you mean",
    )


def tables_arg(tables: Any) -> list[str]:
    """branch_create's `tables`: names of main's tables to copy now (JSON list or text)."""
    if tables is None or tables == "":
        return []
    if isinstance(tables, str):
        try:
            tables = json.loads(tables) if tables.strip().startswith("[") else tables.split(",")
        except json.JSONDecodeError:
            raise AgentError.invalid("tables must be a JSON list of table names") from None
    if not isinstance(tables, list) or not all(isinstance(t, str) and t.strip() for t in tables):
        raise AgentError.invalid("tables must be a list of table names")
    return list(dict.fromkeys(t.strip() for t in tables))
