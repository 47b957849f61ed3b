"""DuckDB's stored text of a view query, column default or CHECK, as PostgreSQL shows it.

What the transpiler wrote for DuckDB goes back to what the user wrote: the division macros
to `/` and `%` (division.as_postgres), the stand-ins of PostgreSQL functions DuckDB lacks
(`__hati_uuid_generate_v4()`, pgcompat.MISSING_PG_FUNCTIONS) to their names, and DuckDB's
`uuid()` (what gen_random_uuid() becomes) to gen_random_uuid(). pg_get_viewdef,
pg_get_expr, pg_get_constraintdef and information_schema show this: pg_dump's output must
restore into PostgreSQL, and ORMs (TypeORM, drizzle-kit) compare defaults with their own.
"""

from __future__ import annotations

import re

from transpiler.division import as_postgres as division_as_postgres
from transpiler.pg_functions_more import STORED_NAMES
from transpiler.pgcompat import MISSING_PG_FUNCTIONS

# A string literal or quoted identifier (left alone), else a stand-in call or uuid().
_TOKEN = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|(?<![\w.])(?:__hati_catalog\.pg\.)?__hati_(\w+)\(|(?<![\w.])uuid\(\)""",
    re.IGNORECASE,
)


def as_postgres(sql: str) -> str:
    return _arrays(_names(division_as_postgres(sql)))


# A typed array literal as DuckDB keeps it: `'{a,b}'::text[]` (pgcompat._array_literal,
# _array_default) is `CAST(main.list_value('a', 'b') AS VARCHAR[])` or `CAST('[a,b]' AS
# VARCHAR[])`; PostgreSQL shows `'{a,b}'::text[]`.
_ITEM = r"(?:'(?:[^']|'')*'|NULL)"
_ARRAY_CAST = re.compile(
    rf"CAST\((?:main\.list_value\((?P<items>(?:{_ITEM}(?:, {_ITEM})*)?)\)|'\[(?P<plain>[^\]'\[\"{{}}]*)\]')"
    r" AS (?P<type>[A-Z][A-Z ]*)(?:\(\d+(?:, ?\d+)?\))?\[\]\)"
)
_PG_ELEMENT = {
    "VARCHAR": "text",
    "INTEGER": "integer",
    "BIGINT": "bigint",
    "SMALLINT": "smallint",
    "DOUBLE": "double precision",
    "FLOAT": "real",
    "BOOLEAN": "boolean",
    "DECIMAL": "numeric",
    "UUID": "uuid",
    "DATE": "date",
    "TIMESTAMP": "timestamp without time zone",
    "TIMESTAMP WITH TIME ZONE": "timestamp with time zone",
}


def _arrays(sql: str) -> str:
    def back(m: re.Match[str]) -> str:
        element = _PG_ELEMENT.get(m["type"])
        if element is None:
            return m.group(0)
        if element == "text" and "(" in m.group(0).rsplit(" AS ", 1)[1]:
            element = "character varying"
        if m["plain"] is not None:
            items: list[str | None] = (
                [i.strip() for i in m["plain"].split(",")] if m["plain"].strip() else []
            )
        else:
            found = re.findall(_ITEM, m["items"] or "")
            items = [None if i == "NULL" else i[1:-1].replace("''", "'") for i in found]
        text = "{" + ",".join(_element_text(i) for i in items) + "}"
        return "'" + text.replace("'", "''") + f"'::{element}[]"

    return _ARRAY_CAST.sub(back, sql)


def _element_text(item: str | None) -> str:
    """An array element as PostgreSQL's array output writes it."""
    if item is None:
        return "NULL"
    if item == "" or item.upper() == "NULL" or re.search(r'[\s{},"\\]', item):
        return '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return item


def _names(sql: str) -> str:
    def back(m: re.Match[str]) -> str:
        text = m.group(0)
        if text[0] in "'\"":
            return text
        name = m.group(1)
        if name is None:
            return "gen_random_uuid()"
        if name.lower() in STORED_NAMES:
            return STORED_NAMES[name.lower()] + "("
        return f"{name.lower()}(" if name.lower() in MISSING_PG_FUNCTIONS else text

    return _TOKEN.sub(back, sql)
