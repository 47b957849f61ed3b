"""VACUUM / ANALYZE in DuckDB's grammar, REINDEX / CLUSTER as acknowledged utilities."""

from __future__ import annotations

import pytest

from transpiler import transpile


@pytest.mark.parametrize(
    ("sql", "verb", "targets"),
    [
        ("VACUUM (VERBOSE, ANALYZE) t", "vacuum analyze", (("t", ()),)),
        ("VACUUM FULL t", "vacuum", (("t", ()),)),
        ("VACUUM FREEZE VERBOSE ANALYZE t (a, B)", "vacuum analyze", (("t", ("a", "b")),)),
        ("VACUUM (INDEX_CLEANUP off, PARALLEL 2) t", "vacuum", (("t", ()),)),
        ('ANALYZE VERBOSE s."T x" ("A")', "analyze", (('s."T x"', ("A",)),)),
        ("ANALYSE t", "analyze", (("t", ()),)),
        ("VACUUM ANALYZE a, b", "vacuum analyze", (("a", ()), ("b", ()))),
        ("ANALYZE a(x, y), s.b", "analyze", (("a", ("x", "y")), ("s.b", ()))),
    ],
)
def test_vacuum_of_relations_goes_to_the_server(
    sql: str, verb: str, targets: tuple[tuple[str, tuple[str, ...]], ...]
) -> None:
    """Each relation is looked at by the server (proxy/pgserver/maintenance.py): DuckDB
    vacuums base tables only, one a statement."""
    st = transpile(sql)[0]
    assert st.command is not None and (st.kind, st.command.name) == ("utility", verb)
    assert st.command.targets == targets


@pytest.mark.parametrize(
    ("sql", "duckdb_sql"),
    [
        ("VACUUM", "VACUUM"),
        ("VACUUM (VERBOSE, ANALYZE)", "VACUUM ANALYZE"),
        ("VACUUM FULL FREEZE", "VACUUM"),
        ("ANALYSE", "ANALYZE"),
        ("ANALYZE", "ANALYZE"),
    ],
)
def test_whole_database_vacuum_in_duckdb_grammar(sql: str, duckdb_sql: str) -> None:
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


@pytest.mark.parametrize("sql", ["ANALYSE", "analyse verbose", "ANALYSE t"])
def test_analyse_answers_analyze(sql: str) -> None:
    assert transpile(sql)[0].tag == "ANALYZE"
