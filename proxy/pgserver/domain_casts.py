"""A cast to a domain (`'x'::email`) checks the domain's constraints, as in PostgreSQL.

DuckDB knows a domain as a type alias, which a cast does not check; so a statement's
cast to a domain becomes a call of the domain's macro (made by proxy/pgserver/domains.py
in the DDL's transaction; transpiler/domains.py rewrite_casts). The domains' names are
kept here, read again at most every _RELOAD_S seconds or after domain DDL in this
process, so a statement that names no domain costs a substring test.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import duckdb

from transpiler.domains import macro_name, rewrite_casts

_RELOAD_S = 2.0
_lock = threading.Lock()
# per database (proxy/db/databases.py): when its names were read, and the names
# (lower case, bare and schema-qualified -> macro)
_names: dict[str, tuple[float, dict[str, str]]] = {}


def changed() -> None:
    with _lock:
        _names.clear()


def _current(cur: Any, database: str) -> dict[str, str]:
    loaded, names = _names.get(database, (-_RELOAD_S, {}))
    if time.monotonic() - loaded < _RELOAD_S:
        return names
    with _lock:
        try:
            rows = cur.execute("SELECT schema_name, name FROM main.__hati_domains").fetchall()
        except duckdb.Error:  # an aborted transaction, a database without the registry:
            _names[database] = (time.monotonic(), names)  # the names known so far, read later
            return names
        names = {}
        for schema, name in rows:
            names[f"{schema}.{name}".lower()] = macro_name(schema, name)
            if schema == "main":
                names[f"public.{name}".lower()] = macro_name(schema, name)
            names.setdefault(name.lower(), macro_name(schema, name))
        _names[database] = (time.monotonic(), names)
    return names


def rewrite(cur: Any, sql: str, database: str) -> str:
    """`sql` with its casts to domains checked (unchanged when it names none); `cur` is a
    cursor of `database`."""
    names = _current(cur, database)
    if not names:
        return sql
    low = sql.lower()
    if not any(name.split(".")[-1] in low for name in names):
        return sql
    return rewrite_casts(sql, names) or sql
