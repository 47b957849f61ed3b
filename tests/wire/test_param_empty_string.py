"""Two faults asyncpg met (it describes before it binds, and asks for binary results):
a parameter beside an empty string literal (`$1 ... ''`) was once read as the start of a
dollar-quoted string, so the statement lost its parameters; a text parameter selected
as a column was described as int4 while Execute sent text."""

from __future__ import annotations

import asyncio

import asyncpg

from tests.conftest import ServerProcess
from transpiler import transpile


def test_a_parameter_before_an_empty_string_is_a_parameter() -> None:
    for sql in ("SELECT $1, ''", "SELECT 1 WHERE $2 <> '' AND $1 = ''", "SELECT $$a''b$$, $1"):
        (st,) = transpile(sql)
        assert st.kind == "select" and st.param_count in (1, 2), sql
    (st,) = transpile("SELECT $$it's $1 ''$$ AS t")  # a dollar quote stays one string
    assert st.param_count == 0 and "$1" in st.sql


def test_text_parameters_as_columns_with_asyncpg(server: ServerProcess) -> None:
    async def go() -> None:
        conn = await asyncpg.connect(
            host=server.host, port=server.port, user="me", database="hatidata"
        )
        try:
            q = "SELECT $1 AS content, x FROM (SELECT 1 AS x) t WHERE $1 <> ''"
            assert [tuple(r) for r in await conn.fetch(q, "hello")] == [("hello", 1)]
            assert await conn.fetch(q, "") == []
            st = await conn.prepare("SELECT $1 AS content, length($1) AS n")
            # length() is integer, as in PostgreSQL
            assert [a.type.name for a in st.get_attributes()] == ["text", "int4"]
            assert tuple(await st.fetchrow("héllo")) == ("héllo", 5)
            rows = await conn.fetch(
                "SELECT deduplicated, $1 AS content FROM store_memory($1)", "asyncpg memory"
            )
            assert [tuple(r) for r in rows] == [(False, "asyncpg memory")]
        finally:
            await conn.close()

    asyncio.run(go())
