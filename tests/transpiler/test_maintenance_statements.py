"""VACUUM / ANALYZE in DuckDB's grammar, REINDEX / CLUSTER as acknowledged utilities."""

from __future__ import annotations

import pytest

from transpiler import transpile


@pytest.mark.parametrize(
    ("sql", "duckdb_sql"),
    [
        ("VACUUM (VERBOSE, ANALYZE) t", "VACUUM ANALYZE t"),
        ("VACUUM FULL t", "VACUUM t"),
        ("VACUUM FREEZE VERBOSE ANALYZE t (a, b)", "VACUUM ANALYZE t (a, b)"),
        ("VACUUM (INDEX_CLEANUP off, PARALLEL 2) t", "VACUUM t"),
        ('ANALYZE VERBOSE s."T x" (a)', 'ANALYZE s."T x" (a)'),
        ("ANALYSE t", "ANALYZE t"),
        ("VACUUM ANALYZE a, b", "VACUUM ANALYZE"),  # several tables: the whole database
        ("ANALYZE a(x), b", "ANALYZE"),
        ("VACUUM ANALYZE t", "VACUUM ANALYZE t"),  # DuckDB's own form: as written
        ("VACUUM", "VACUUM"),
    ],
)
def test_vacuum_in_duckdb_grammar(sql: str, duckdb_sql: str) -> None:
    assert transpile(sql)[0].sql == duckdb_sql


@pytest.mark.parametrize(
    ("sql", "command", "tag"),
    [
        ("REINDEX TABLE t", "reindex t", "REINDEX"),
        ('REINDEX TABLE CONCURRENTLY s."T"', 'reindex s."T"', "REINDEX"),
        ("REINDEX (VERBOSE) INDEX i", "reindex i", "REINDEX"),
        ("REINDEX SCHEMA public", "reindex", "REINDEX"),
        ("CLUSTER t USING i", "cluster t", "CLUSTER"),
        ("CLUSTER", "cluster", "CLUSTER"),
    ],
)
def test_reindex_and_cluster_are_utilities(sql: str, command: str, tag: str) -> None:
    st = transpile(sql)[0]
    assert st.command is not None and st.command.name == command
    assert (st.kind, st.tag) == ("utility", tag)
