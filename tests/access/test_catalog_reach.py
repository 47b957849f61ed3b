"""What a key's SQL may not name so that its catalogs stay filtered (catalog_reach.py):
DuckDB's real catalog functions by qualified name, and hatiproxy's own relations."""

from __future__ import annotations

import pytest

from proxy.access import catalog_reach
from proxy.access.sql_policy import _tokens


def _refusal(sql: str) -> str | None:
    return catalog_reach.refusal(sql, _tokens(sql), frozenset({"__hati_agent_0"}))


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM system.main.duckdb_tables()", "function duckdb_tables"),
        ('SELECT * FROM "system".duckdb_columns()', "function duckdb_columns"),
        ('SELECT * FROM "SYSTEM" . "MAIN" . "DUCKDB_VIEWS"()', "function duckdb_views"),
        ("SELECT (SELECT count(*) FROM system.main.duckdb_indexes())", "function duckdb_indexes"),
        ("SELECT * FROM system.main.duckdb_schemas", "function duckdb_schemas"),
        ("SELECT * FROM pg_catalog.__hati_owners", "table __hati_owners"),
        ('SELECT * FROM (SELECT * FROM "__hati_routines") r', "table __hati_routines"),
        ("SELECT 1 FROM t JOIN main.__hati_constraints c ON true", "table __hati_constraints"),
        # what stays allowed: the filtered functions, other system functions, CTEs named
        # __hati*, agent relations, writes the transpiler makes to its registries
        ("SELECT * FROM duckdb_tables()", None),
        ("SELECT * FROM system.main.duckdb_databases()", None),
        ("SELECT * FROM system.information_schema.tables", None),
        ("WITH __hati_x AS (SELECT 1) SELECT * FROM __hati_x", None),
        ("SELECT * FROM __hati_agent_0", None),
        ("INSERT INTO main.__hati_routines VALUES (1)", None),
        ("SELECT 'system.main.duckdb_tables()'", None),
    ],
)
def test_refusal(sql: str, expected: str | None) -> None:
    assert _refusal(sql) == expected
