"""Argument checks of the branch operations: branch ids and branch_create's `tables`."""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from typing import Any

from proxy.agent.branches.sql import SCHEMA_PREFIX
from proxy.core.errors import AgentError

_ID = re.compile(r"^[0-9a-f]{32}$")


def normalise_id(branch_id: Any) -> str:
    """Accept the 32-hex id, its UUID form or the schema name; anything else is not found."""
    if not isinstance(branch_id, str) or not branch_id.strip():
        raise AgentError.invalid("branch_id must be a non-empty string")
    text = branch_id.strip().lower()
    if text.startswith(SCHEMA_PREFIX):
        text = text[len(SCHEMA_PREFIX) :]
    with contextlib.suppress(ValueError):
        text = uuid.UUID(text).hex
    if not _ID.match(text):
        raise AgentError.not_found(f"branch {branch_id!r} does not exist")
    return text


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
