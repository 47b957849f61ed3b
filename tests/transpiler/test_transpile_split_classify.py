"""Statement splitting, kind/tag classification, pass-through and caching."""

from __future__ import annotations

import dataclasses

import pytest

from transpiler import TranspileError, transpile


def test_empty_inputs_give_no_statements() -> None:
    for sql in ("", "   ", ";", " ; ;\n", "-- only a comment", "/* c */ ;"):
        assert transpile(sql) == ()


def test_split_keeps_semicolons_inside_strings_and_comments() -> None:
    stmts = transpile("/* a; b */ SELECT 'x;y' AS a; -- c;\nSELECT $$;$$ AS b")
    assert [s.sql for s in stmts] == ["SELECT 'x;y' AS a", "SELECT ';' AS b"]


@pytest.mark.parametrize(
    ("sql", "kind", "tag"),
    [
        ("SELECT 1", "select", "SELECT"),
        ("VALUES (1)", "select", "SELECT"),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "select", "SELECT"),
        ("WITH x AS (SELECT 1 AS a) INSERT INTO t SELECT a FROM x", "insert", "INSERT"),
        ("INSERT INTO t VALUES (1)", "insert", "INSERT"),
        ("UPDATE t SET a = 1", "update", "UPDATE"),
        ("DELETE FROM t", "delete", "DELETE"),
        ("CREATE TABLE t (a INT)", "ddl", "CREATE TABLE"),
        ("CREATE TABLE t AS SELECT 1", "ddl", "SELECT"),
        ("CREATE OR REPLACE VIEW v AS SELECT 1", "ddl", "CREATE VIEW"),
        ("CREATE UNIQUE INDEX i ON t (a)", "ddl", "CREATE INDEX"),
        ('CREATE SCHEMA "branch_ab12"', "ddl", "CREATE SCHEMA"),
        ("DROP VIEW v", "ddl", "DROP VIEW"),
        ("DROP TABLE IF EXISTS t", "ddl", "DROP TABLE"),
        ("ALTER TABLE t RENAME TO u", "ddl", "ALTER TABLE"),
        ("TRUNCATE t", "ddl", "TRUNCATE TABLE"),
        ("COPY t TO 'f.parquet' (FORMAT parquet)", "copy", "COPY"),
        ("EXPLAIN SELECT 1", "explain", "EXPLAIN"),
        ("PRAGMA table_info('t')", "other", "PRAGMA"),
        ("INSTALL fts", "other", "INSTALL"),
        ("CREATE MACRO m(a) AS a + 1", "ddl", "CREATE MACRO"),
    ],
)
def test_kind_and_tag(sql: str, kind: str, tag: str) -> None:
    (stmt,) = transpile(sql)
    assert (stmt.kind, stmt.tag) == (kind, tag)


@pytest.mark.parametrize(
    "sql",
    [
        "PRAGMA table_info('t')",
        "ATTACH 'x.db' AS x (READ_ONLY)",
        "INSTALL fts",
        "SUMMARIZE t",
        "COPY t TO 'f.parquet' (FORMAT parquet)",
        "SELECT 1 +* FROM",
    ],
)
def test_duckdb_native_or_unparseable_sql_passes_through(sql: str) -> None:
    (stmt,) = transpile(sql)
    assert stmt.sql == sql


def test_unterminated_string_passes_through_without_semantics() -> None:
    (stmt,) = transpile("SELECT 'abc")
    assert stmt.sql == "SELECT 'abc"


def test_unterminated_string_with_semantics_is_a_syntax_error() -> None:
    with pytest.raises(TranspileError) as info:
        transpile("SELECT semantic_match(e, 'abc")
    assert info.value.sqlstate == "42601"


def test_unknown_dialect() -> None:
    with pytest.raises(TranspileError):
        transpile("SELECT 1", dialect="oracle")


def test_results_are_cached_and_immutable() -> None:
    a = transpile("SELECT semantic_rank(embedding, 'x') FROM t")
    b = transpile("SELECT semantic_rank(embedding, 'x') FROM t")
    assert a is b
    assert isinstance(a, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a[0].sql = "DROP TABLE t"  # type: ignore[misc]
    assert transpile("SELECT semantic_rank(embedding, 'x') FROM t", vector_dims=3) is not a


def test_param_count_is_highest_placeholder() -> None:
    (stmt,) = transpile("SELECT $2, $10 FROM t WHERE a = $1")
    assert stmt.param_count == 10
    assert stmt.sql == "SELECT $2, $10 FROM t WHERE a = $1"
