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
from transpiler.pgcompat import MISSING_PG_FUNCTIONS

# A string literal or quoted identifier (left alone), else a stand-in call or uuid().
_TOKEN = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|(?<![\w.])(?:__hati_catalog\.pg\.)?__hati_(\w+)\(|(?<![\w.])uuid\(\)""",
    re.IGNORECASE,
)


def as_postgres(sql: str) -> str:
    return _names(division_as_postgres(sql))


def _names(sql: str) -> str:
    def back(m: re.Match[str]) -> str:
        text = m.group(0)
        if text[0] in "'\"":
            return text
        name = m.group(1)
        if name is None:
            return "gen_random_uuid()"
        return f"{name.lower()}(" if name.lower() in MISSING_PG_FUNCTIONS else text

    return _TOKEN.sub(back, sql)
