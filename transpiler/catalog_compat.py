"""Catalog-query rewrites: what psql, pgJDBC, SQLAlchemy and asyncpg metadata need.

The pg_catalog / information_schema stand-ins live in the attached database
`__hati_catalog` (see proxy/db/catalog/install.py), found through each cursor's
search_path. These rewrites work on the SQL text outside string literals and quoted
identifiers; they only run when the statement mentions the words they act on, so
other SQL pays one substring test. (The semantic rewrites are tree transforms; these
stay textual because sqlglot cannot parse several of the inputs, e.g. `::oid[]`.)

R1 (before parsing) `pg_catalog.<name>` -> `<name>` for tables, column qualifiers and
   types as well as functions: `FROM pg_catalog.pg_class c` -> `FROM pg_class c`; but
   the target of CREATE / ALTER / DROP / COMMENT ON -> `__hati_catalog.pg.<name>`.
R3 (before) `x::oid[]` -> `x::bigint[]`: sqlglot cannot parse `oid[]`.
R4 (before) a set-returning function in FROM with a bare alias gets that alias as its
   column name too, as in Postgres: `FROM generate_series(0, n) s` -> `... s(s)`;
   `JOIN unnest(a) AS s` likewise.
R5 (before) Postgres array literals: `'{a,b}'::text[]` -> `'[a,b]'::text[]`.
R7 (before) a catalog name column's subscript, 0-based: `typname[0]` -> `typname[1]`.
R2 (after) `information_schema.<name>` -> `__hati_catalog.info.<name>`.
R6 (after) a reg* cast used as an OID is the OID form, whatever the operand:
   `CAST(__HATI_REGCLASS_NAME(x) AS BIGINT)` -> `__hati_regclass(x)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

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


# The object a DDL statement creates / changes, when written pg_catalog.x: it names the
# stand-in itself (__hati_catalog.pg.x), so the server refuses it as a catalog change
# (proxy/access/system_objects.py) instead of creating x in the user's schema.
_DDL_TARGET = re.compile(
    r"^(\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?"
    r"(?:VIEW|TABLE|MACRO|FUNCTION|SEQUENCE|TYPE)(?:\s+IF\s+NOT\s+EXISTS)?"
    r"|ALTER\s+(?:TABLE|VIEW|SEQUENCE|INDEX|FUNCTION|TYPE)(?:\s+IF\s+EXISTS)?"
    r"|DROP\s+(?:TABLE|VIEW|MACRO|FUNCTION|SEQUENCE|INDEX|TYPE)(?:\s+IF\s+EXISTS)?"
    r"|COMMENT\s+ON\s+\w+)\s+)pg_catalog\s*\.\s*",
    re.IGNORECASE,
)


def _quoted_schema(sql: str, schema: str, replacement: str) -> str:
    """The quoted form of a schema qualifier, `"schema".x` (as TypeORM and other ORMs
    write every name), replaced like the bare one; string literals untouched."""
    quoted = f'"{schema}"'
    if quoted not in sql:
        return sql
    out, last = [], 0
    for m in _QUOTED.finditer(sql):
        dot = _DOT_AFTER.match(sql, m.end())
        if m.group(0) == quoted and dot is not None:
            out.append(sql[last : m.start()] + replacement)
            last = dot.end()
    out.append(sql[last:])
    return "".join(out)


_DOT_AFTER = re.compile(r"\s*\.\s*")


def r1_strip_pg_catalog(sql: str) -> str:
    sql = _DDL_TARGET.sub(r"\1__hati_catalog.pg.", sql, count=1)
    sql = _quoted_schema(sql, "pg_catalog", "")
    return _outside_quotes(sql, lambda s: _PG_CATALOG.sub("", s))


_OID_ARRAY = re.compile(r"::\s*oid\s*\[\]", re.IGNORECASE)
_ARRAY_LITERAL = re.compile(r"'\{([^'{}]*)\}'(\s*::\s*\w+\s*\[\])")
_SRF = re.compile(r"\b(generate_series|unnest|generate_subscripts)\s*\(", re.IGNORECASE)
_BARE_ALIAS = re.compile(r"\s+([a-z_]\w*)\b(?!\s*\()", re.IGNORECASE)  # FROM f(...) s: no AS
# FROM / JOIN f(...) AS s (ADBC's `CROSS JOIN UNNEST(conkey) AS conkeys`); after a comma
# this could be a select-list item (`SELECT a, unnest(x) AS y`), so it is not taken there.
_AS_ALIAS = re.compile(r"\s+AS\s+([a-z_]\w*)\b(?!\s*\()", re.IGNORECASE)
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
    "returning",  # INSERT ... SELECT * FROM unnest(...) RETURNING ...
    "having",
    "offset",
    "fetch",
    "window",
    "natural",
    "full",
    "except",
    "intersect",
    "for",
}


def r3_oid_array(sql: str) -> str:
    return _outside_quotes(sql, lambda s: _OID_ARRAY.sub("::bigint[]", s))


_CLAUSE = re.compile(r"\(|\)|\b(SELECT|FROM)\b", re.IGNORECASE)


def _in_select_list(sql: str, end: int) -> bool:
    """Whether `end` is in a SELECT's output list (the nearest SELECT / FROM of the same
    parenthesis level is SELECT): `SELECT a, generate_subscripts(k, 1) idx` (ActiveRecord's
    primary key query) names a column there, not a table."""
    depth = 0
    for m in reversed(list(_CLAUSE.finditer(sql, 0, end))):
        if m[0] == ")":
            depth += 1
        elif m[0] == "(":
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0:
            return m[0].upper() == "SELECT"
    return False


def r4_srf_alias(sql: str) -> str:
    out, pos = [], 0
    for m in _SRF.finditer(sql):
        if m.start() < pos or not re.search(r"(FROM|,|JOIN)\s*$", sql[: m.start()], re.I):
            continue
        if sql[: m.start()].rstrip().endswith(",") and _in_select_list(sql, m.start()):
            continue
        depth, i = 0, m.end() - 1
        while i < len(sql):
            depth += {"(": 1, ")": -1}.get(sql[i], 0)
            i += 1
            if depth == 0:
                break
        alias = _BARE_ALIAS.match(sql, i)
        if (alias is None or alias[1].lower() == "as") and re.search(
            r"(FROM|JOIN)\s*$", sql[: m.start()], re.I
        ):
            alias = _AS_ALIAS.match(sql, i)
        if alias and alias[1].lower() not in _NOT_ALIAS:
            out.append(sql[pos : alias.end()] + f"({alias[1]})")
            pos = alias.end()
    out.append(sql[pos:])
    return "".join(out)


def r5_array_literal(sql: str) -> str:
    return _ARRAY_LITERAL.sub(lambda m: f"'[{m[1]}]'{m[2]}", sql)


def r2_information_schema(sql: str) -> str:
    # The quoted-identifier forms (information_schema."columns", "information_schema".x)
    # must be rewritten too.
    sql = _quoted_schema(sql, "information_schema", "__hati_catalog.info.")
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


_BEFORE_HINTS = ("pg_catalog", "oid", "'{", "generate_series", "unnest", "generate_subscripts")
_AFTER_HINTS = ("information_schema", "__HATI_REG", "__hati_reg")
# The substring tests as one regex search each (any(h in s ...) costs a generator).
_BEFORE_HINT = re.compile("|".join(re.escape(h) for h in _BEFORE_HINTS))
_AFTER_HINT = re.compile("|".join(re.escape(h) for h in _AFTER_HINTS))


# R7: a catalog `name` column's subscript is 0-based, a character (pg_dump's getTypes
# reads `typname[0] = '_'`); DuckDB's string subscript is 1-based.
_NAME_SUBSCRIPT = re.compile(r"\b(typname|relname|attname|proname|nspname|conname)\[(\d+)\]", re.I)


def r7_name_subscript(sql: str) -> str:
    return _outside_quotes(
        sql, lambda part: _NAME_SUBSCRIPT.sub(lambda m: f"{m[1]}[{int(m[2]) + 1}]", part)
    )


def before(sql: str) -> str:
    """Text rewrites sqlglot needs done before parsing (R1, R3, R4, R5, R7)."""
    if "name[" in sql:
        sql = r7_name_subscript(sql)
    if _BEFORE_HINT.search(sql.lower()) is None:
        return sql
    return r5_array_literal(r4_srf_alias(r3_oid_array(r1_strip_pg_catalog(sql))))


def after(sql: str) -> str:
    """Rewrites of the generated DuckDB SQL (R2, R6)."""
    if _AFTER_HINT.search(sql) is None and "information_schema" not in sql.lower():
        return sql
    return r6_reg_oid(r2_information_schema(sql))
