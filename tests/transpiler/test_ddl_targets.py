"""transpiler.ddl_targets: the objects a statement creates, changes or writes, read off the
transpiled statement's tree (or, for DuckDB-only heads, its tokens)."""

from __future__ import annotations

import pytest

from transpiler import transpile
from transpiler.ddl_targets import targets


def one(sql: str) -> list[tuple[str, str, str, str, str]]:
    out = []
    for st in transpile(sql):
        found = targets(st.sql)
        assert found is not None, sql
        out += [(t.action, t.kind, t.schema, t.name, t.new_name) for t in found]
    return out


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("CREATE TABLE s.t (a int)", [("create", "table", "s", "t", "")]),
        ("CREATE OR REPLACE VIEW v AS SELECT 1", [("replace", "view", "", "v", "")]),
        ("DROP TABLE a, b", [("drop", "table", "", "a", ""), ("drop", "table", "", "b", "")]),
        ("ALTER TABLE t RENAME TO u", [("rename", "relation", "", "t", "u")]),
        ("ALTER TABLE t ADD COLUMN b int", [("alter", "relation", "", "t", "")]),
        ("CREATE INDEX i ON s.t (a)", [("create", "index", "s", "i", "")]),
        ("CREATE MACRO m(a) AS a + 1", [("create", "function", "", "m", "")]),
        ("CREATE OR REPLACE MACRO tm() AS TABLE SELECT 1", [("replace", "function", "", "tm", "")]),
        ("DROP MACRO TABLE tm", [("drop", "function", "", "tm", "")]),
        ("CREATE TYPE mood AS ENUM ('a')", [("create", "type", "", "mood", "")]),
        ("ALTER SEQUENCE sq RESTART WITH 3", [("alter", "sequence", "", "sq", "")]),
        ("CREATE SCHEMA s", [("create", "schema", "", "s", "")]),
        ("DROP SCHEMA s CASCADE", [("drop", "schema", "", "s", "")]),
        ("COMMENT ON COLUMN s.t.a IS 'x'", [("comment", "relation", "s", "t", "")]),
        ("INSERT INTO t (a) VALUES (1)", [("write", "relation", "", "t", "")]),
        ("COPY t TO STDOUT", []),
        ("SELECT 1", []),
        # pg_catalog.x as a DDL target names the catalog's stand-in, not public.x
        ("CREATE VIEW pg_catalog.v AS SELECT 1", [("create", "view", "pg", "v", "")]),
        ("DROP TABLE pg_catalog.pg_class", [("drop", "table", "pg", "pg_class", "")]),
    ],
)
def test_targets(sql: str, expected: list) -> None:
    assert one(sql) == expected
