"""A branch copy of a table keeps its varchar(n) lengths: they are CHECK constraints in
DuckDB's own DDL (transpiler/varchar_length.py), which branch_ddl re-creates."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_support import open_layer, run
from branch_support import bq, create, rows, sql

from proxy.core.errors import AgentError
from transpiler import transpile


def test_branch_copy_enforces_varchar_length(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            # On main as the wire creates it: the Postgres DDL through the transpiler.
            for st in transpile("CREATE TABLE people (id int PRIMARY KEY, name varchar(5))"):
                await sql(layer, st.sql)
            await sql(layer, "INSERT INTO people VALUES (1, 'ann')")
            bid = (await create(layer))["branch_id"]
            await bq(layer, bid, "INSERT INTO people VALUES (2, 'bobby')")  # copies the table
            ddl = await sql(
                layer,
                "SELECT sql FROM duckdb_tables() WHERE table_name = 'people' "
                "AND schema_name <> 'main'",
            )
            assert len(ddl) == 1 and 'CHECK((length("name") <= 5))' in ddl[0][0], ddl
            for text in (
                "INSERT INTO people VALUES (3, 'abcdef')",
                "UPDATE people SET name = name || 'xyz' WHERE id = 1",
            ):
                with pytest.raises(AgentError) as err:
                    await bq(layer, bid, text)
                assert err.value.sqlstate == "22001", text
                assert "value too long for type character varying(5)" in str(err.value)
            got = await bq(layer, bid, "SELECT id, name FROM people ORDER BY id")
            assert got == [{"id": 1, "name": "ann"}, {"id": 2, "name": "bobby"}]
            assert await rows(layer, "people") == [(1, "ann")]  # main untouched

    run(main())
