"""DuckDB's search_path setting as the (database, schema) pairs it names, in order: where
an unqualified table name is looked up (alter_rebuild.py, column_origins.py)."""

from __future__ import annotations

import re

_SEARCH_PATH_ENTRY = re.compile(r'"((?:[^"]|"")*)"|([^.",]+)')


def search_path_order(path: str, current: str) -> list[tuple[str, str]]:
    """DuckDB's search_path setting ('"db".main,pg' / 'main,sales') as (database, schema)."""
    out = []
    for entry in (path or "").split(","):
        parts = [
            (q.replace('""', '"') if q else bare.strip())
            for q, bare in _SEARCH_PATH_ENTRY.findall(entry.strip())
        ]
        parts = [p for p in parts if p]
        if len(parts) == 1:
            out.append((current, parts[0]))
        elif len(parts) == 2:
            out.append((parts[0], parts[1]))
    return out or [(current, "main")]
