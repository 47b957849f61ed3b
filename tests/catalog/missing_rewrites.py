"""Rewrites the catalog layer needs from the transpiler that it does not do yet.

Test-only: the corpus runs through ``transpile()`` alone (the real path) and through
``with_missing_rewrites()`` (this module around ``transpile()``), which proves the
catalog answers every captured query once the transpiler does these. Each rewrite is
a no-op when the transpiler already did it, so this module can shrink to nothing.

R1 (before transpiling) ``pg_catalog.<name>`` -> ``<name>`` for tables, column
   qualifiers and types too, not only functions:
   ``FROM pg_catalog.pg_class c``             -> ``FROM pg_class c``
   ``pg_catalog.pg_class.relname``             -> ``pg_class.relname``
   ``x::pg_catalog.regtype::pg_catalog.text``  -> ``x::regtype::text``
   (then the transpiler's own reg* rule gives ``__hati_regtype_name(x)``).
   The catalog's objects are found through the cursor's search_path.
R2 (after transpiling) ``information_schema.<name>`` -> ``__hati_catalog.info.<name>``
   (DuckDB's own information_schema shows `main`; no database may own a schema of that
   name, so ours lives in the attached catalog database).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from transpiler import transpile

# A string literal (with '' escapes, optionally E-prefixed with backslash escapes) or a
# quoted identifier: rewrites never touch these.
_QUOTED = re.compile(r"""[Ee]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*\"""")
_PG_CATALOG = re.compile(r"\bpg_catalog\s*\.\s*(?=[\w~!<>=*])", re.IGNORECASE)
_INFO_SCHEMA = re.compile(r"(?<![\w.])information_schema\s*\.\s*(?=\w)", re.IGNORECASE)


def _outside_quotes(sql: str, fn: Callable[[str], str]) -> str:
    out, last = [], 0
    for m in _QUOTED.finditer(sql):
        out.append(fn(sql[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(fn(sql[last:]))
    return "".join(out)


def r1_strip_pg_catalog(sql: str) -> str:
    return _outside_quotes(sql, lambda s: _PG_CATALOG.sub("", s))


def r2_information_schema(sql: str) -> str:
    return _outside_quotes(sql, lambda s: _INFO_SCHEMA.sub("__hati_catalog.info.", s))


def with_missing_rewrites(sql: str) -> list[str]:
    """DuckDB statements for `sql`: transpile() plus R1 and R2."""
    return [r2_information_schema(st.sql) for st in transpile(r1_strip_pg_catalog(sql))]
