r"""Rewrites the catalog layer needs from the transpiler that it does not do yet.

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
R3 (before) ``x::oid[]`` -> ``x::bigint[]``: sqlglot cannot parse ``oid[]`` and the whole
   statement (asyncpg's type introspection) goes to DuckDB untranspiled.
R4 (before) a set-returning function in FROM with a bare alias gets that alias as its
   column name too, as in Postgres: ``FROM generate_series(0, n) s`` ->
   ``FROM generate_series(0, n) s(s)``; DuckDB otherwise reads ``s`` as the whole row
   (psql's \d publication query indexes ``prattrs[s]``).
R5 (before) Postgres array literals: ``'{a,b}'::text[]`` -> ``'[a,b]'::text[]``
   (pgJDBC getSQLKeywords, DBeaver).
R6 (after) a reg* cast whose result is used as an OID is the OID form, whatever the
   operand: ``(schema || '.' || name)::regclass::oid`` ->
   ``__hati_regclass(schema || '.' || name)``, not ``CAST(__hati_regclass_name(..) AS
   BIGINT)`` (Metabase's field comments). The ``_name`` form is for display only.
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
_INFO_SCHEMA = re.compile(r"(?<![\w.])information_schema\s*\.\s*(?=[\w\"]|$)", re.IGNORECASE)
_REGCLASS_OID = re.compile(r"CAST\(__HATI_(REG\w+?)_NAME\(", re.IGNORECASE)


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


_OID_ARRAY = re.compile(r"::\s*oid\s*\[\]", re.IGNORECASE)
_ARRAY_LITERAL = re.compile(r"'\{([^'{}]*)\}'(\s*::\s*\w+\s*\[\])")
_SRF = re.compile(r"\b(generate_series|unnest|generate_subscripts)\s*\(", re.IGNORECASE)
_BARE_ALIAS = re.compile(r"\s+([a-z_]\w*)\b(?!\s*\()", re.IGNORECASE)  # FROM f(...) s: no AS
_NOT_ALIAS = {
    "on",
    "where",
    "join",
    "left",
    "right",
    "inner",
    "cross",
    "group",
    "order",
    "limit",
    "union",
    "with",
    "as",
    "and",
    "or",
    "from",
    "then",
    "else",
    "end",
}


def r3_oid_array(sql: str) -> str:
    return _outside_quotes(sql, lambda s: _OID_ARRAY.sub("::bigint[]", s))


def r4_srf_alias(sql: str) -> str:
    out, pos = [], 0
    for m in _SRF.finditer(sql):
        if m.start() < pos or not re.search(r"(FROM|,|JOIN)\s*$", sql[: m.start()], re.I):
            continue
        depth, i = 0, m.end() - 1
        while i < len(sql):
            depth += {"(": 1, ")": -1}.get(sql[i], 0)
            i += 1
            if depth == 0:
                break
        alias = _BARE_ALIAS.match(sql, i)
        if alias and alias[1].lower() not in _NOT_ALIAS:
            out.append(sql[pos : alias.end()] + f"({alias[1]})")
            pos = alias.end()
    out.append(sql[pos:])
    return "".join(out)


def r5_array_literal(sql: str) -> str:
    return _ARRAY_LITERAL.sub(lambda m: f"'[{m[1]}]'{m[2]}", sql)


def r2_information_schema(sql: str) -> str:
    # The quoted-identifier form (information_schema."columns") must be rewritten too.
    out, last = [], 0
    for m in _QUOTED.finditer(sql):
        out.append(_INFO_SCHEMA.sub("__hati_catalog.info.", sql[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_INFO_SCHEMA.sub("__hati_catalog.info.", sql[last:]))
    return "".join(out)


def r6_reg_oid(sql: str) -> str:
    """CAST(__HATI_REGx_NAME(arg) AS BIGINT) -> __HATI_REGx(arg), parens balanced."""
    while m := _REGCLASS_OID.search(sql):
        depth, i = 1, m.end()
        while depth and i < len(sql):
            depth += {"(": 1, ")": -1}.get(sql[i], 0)
            i += 1
        tail = re.match(r"\s+AS\s+BIGINT\)", sql[i:], re.IGNORECASE)
        if not tail:
            break
        arg = sql[m.end() : i - 1]
        sql = sql[: m.start()] + f"__hati_{m[1].lower()}({arg})" + sql[i + tail.end() :]
    return sql


def with_missing_rewrites(sql: str) -> list[str]:
    """DuckDB statements for `sql`: transpile() plus R1-R6."""
    before = r5_array_literal(r4_srf_alias(r3_oid_array(r1_strip_pg_catalog(sql))))
    return [r6_reg_oid(r2_information_schema(st.sql)) for st in transpile(before)]
