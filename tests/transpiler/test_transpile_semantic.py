"""semantic_match / vector_match / semantic_rank / JOIN_VECTOR / __HATI_EMBED__ and bind_sql."""

from __future__ import annotations

import duckdb
import duckdb_extensions
import pytest

from transpiler import Marker, TranspileError, infer_param_types, transpile


def one(sql: str, **kw):
    (stmt,) = transpile(sql, **kw)
    return stmt


def test_match_default_threshold_and_markers() -> None:
    stmt = one("SELECT * FROM docs WHERE semantic_match(embedding, 'refund')")
    assert stmt.sql == (
        "SELECT * FROM docs WHERE "
        "ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('refund')) >= __HATI_DEFAULT_THRESHOLD__()"
    )
    assert stmt.markers == (Marker("text", "refund", "query"),)


def test_vector_match_is_semantic_match() -> None:
    a = one("SELECT 1 FROM t WHERE vector_match(embedding, 'x', 0.5)").sql
    b = one("SELECT 1 FROM t WHERE semantic_match(embedding, 'x', 0.5)").sql
    assert a == b and a.endswith(">= 0.5")


def test_text_column_first_argument_is_embedded_per_row() -> None:
    stmt = one("SELECT id FROM docs WHERE semantic_match(content, 'billing')")
    assert "ARRAY_COSINE_SIMILARITY(__HATI_EMBED__(content), __HATI_EMBED__('billing'))" in stmt.sql
    assert stmt.markers == (
        Marker("column", "content", "passage"),
        Marker("text", "billing", "query"),
    )


def test_join_vector_embeds_the_text_side() -> None:
    stmt = one(
        "SELECT * FROM tickets t LEFT JOIN_VECTOR kb k ON semantic_match(k.embedding, t.subject)"
    )
    assert stmt.sql == (
        "SELECT * FROM tickets AS t LEFT JOIN kb AS k ON "
        "ARRAY_COSINE_SIMILARITY(k.embedding, __HATI_EMBED__(t.subject)) >= __HATI_DEFAULT_THRESHOLD__()"
    )
    assert stmt.markers == (Marker("column", "t.subject", "passage"),)


def test_rank_desc_becomes_distance_ascending_also_through_alias() -> None:
    direct = one("SELECT id FROM d ORDER BY semantic_rank(embedding, 'q') DESC LIMIT 3").sql
    assert direct.endswith("ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__('q')) LIMIT 3")
    alias = one("SELECT semantic_rank(embedding, 'q') AS s FROM d ORDER BY s DESC LIMIT 3").sql
    assert alias.endswith("ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__('q')) LIMIT 3")


def test_param_marker() -> None:
    stmt = one("SELECT * FROM d WHERE semantic_match(embedding, $1) LIMIT $2")
    assert stmt.markers == (Marker("param", 1, "query"),)
    assert stmt.param_count == 2
    assert stmt.bind_sql(3) == stmt.sql  # no text markers: nothing to bind


def test_bind_sql_numbers_distinct_texts_in_order() -> None:
    stmt = one(
        "SELECT semantic_rank(embedding, 'b') FROM d WHERE semantic_match(embedding, 'a') "
        "OR semantic_match(embedding, 'b') OR semantic_match(embedding, $1)",
        vector_dims=4,
    )
    assert stmt.bind_texts == ("b", "a")
    bound = stmt.bind_sql(2)
    assert bound == (
        "SELECT ARRAY_COSINE_SIMILARITY(embedding, CAST($2 AS FLOAT[4])) FROM d WHERE "
        "ARRAY_COSINE_SIMILARITY(embedding, CAST($3 AS FLOAT[4])) >= __HATI_DEFAULT_THRESHOLD__() OR "
        "ARRAY_COSINE_SIMILARITY(embedding, CAST($2 AS FLOAT[4])) >= __HATI_DEFAULT_THRESHOLD__() OR "
        "ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__($1)) >= __HATI_DEFAULT_THRESHOLD__()"
    )
    assert stmt.bind_sql(2) is bound  # cached per first_param
    assert "__HATI_EMBED__('b')" in stmt.sql  # the statement itself is unchanged


def test_user_written_marker_is_recognised() -> None:
    stmt = one("SELECT array_cosine_similarity(e, __HATI_EMBED__('hello')) FROM t")
    assert stmt.markers == (Marker("text", "hello", "query"),)


def test_in_window_and_not_parenthesised() -> None:
    stmt = one("SELECT NOT semantic_match(embedding, 'x') FROM t")
    assert stmt.sql == (
        "SELECT NOT (ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('x')) >= __HATI_DEFAULT_THRESHOLD__()) FROM t"
    )


@pytest.mark.parametrize(
    ("sql", "sqlstate", "position", "words"),
    [
        ("SELECT semantic_match(e) FROM t", "42883", 8, "expected 2 or 3 arguments"),
        ("SELECT 1 FROM t WHERE semantic_rank(e, 'a', 'b')", "42883", 23, "expected 2"),
        ("SELECT semantic_match(e, NULL) FROM t", "42883", 8, "search argument"),
        ("SELECT semantic_match(e, 'x', 'high') FROM t", "42883", 8, "threshold"),
        ("SELECT semantic_match(e, 'x', 1.5) FROM t", "22023", 8, "between -1 and 1"),
        ("SELECT 1 FROM t WHERE semantic_match(e, 'x', -2)", "22023", 23, "not -2"),
        ("SELECT vector_match(e, 'x', 1.0001) FROM t", "22023", 8, "vector_match: threshold"),
        ("SELECT semantic_match(e, 'x', -(-(3))) FROM t", "22023", 8, "(a cosine similarity)"),
        ("SELECT semantic_match(e, 'x' FROM t", "42601", None, "syntax error"),
        ("SELECT * FROM t WHERE x IN hatidata_context('t', 'q', 3)", "0A000", 28, "FROM"),
        ("SELECT hatidata_context('t', 'q', 3)", "0A000", 8, "only be used in FROM"),
    ],
)
def test_errors(sql: str, sqlstate: str, position: int | None, words: str) -> None:
    with pytest.raises(TranspileError) as info:
        transpile(sql)
    assert info.value.sqlstate == sqlstate
    assert words in info.value.message
    if position is not None:
        assert info.value.position == position


@pytest.mark.parametrize(
    ("threshold", "compared_with"),
    [
        ("1", "1"),
        ("-1.0", "-1.0"),
        ("0.25", "0.25"),
        ("NULL", "NULL"),
        # known only at run time: the server checks the range
        ("$1", "__HATI_THRESHOLD__($1)"),
        ("t.min_score", "__HATI_THRESHOLD__(t.min_score)"),
        ("0.2 + 0.1", "__HATI_THRESHOLD__(0.2 + 0.1)"),
    ],
)
def test_threshold_forms(threshold: str, compared_with: str) -> None:
    stmt = one(f"SELECT 1 FROM t WHERE semantic_match(e, 'x', {threshold})")
    assert stmt.sql.endswith(f">= {compared_with}")


def test_threshold_parameter_is_a_double() -> None:
    stmt = one("SELECT 1 FROM t WHERE semantic_match(e, 'x', $1)")
    assert infer_param_types(stmt, lambda schema, table, column: None) == {1: "DOUBLE"}


def test_second_statement_error_position_is_absolute() -> None:
    with pytest.raises(TranspileError) as info:
        transpile("SELECT 1; SELECT semantic_match(e) FROM t")
    assert info.value.position == 18


def test_rank_order_by_uses_hnsw_index() -> None:
    duckdb_extensions.import_extension("vss")
    con = duckdb.connect()
    con.execute("LOAD vss")
    con.execute("CREATE TABLE d (id INT, embedding FLOAT[3])")
    con.execute("INSERT INTO d SELECT i, [i, 1, 0]::FLOAT[3] FROM range(100) r(i)")
    con.execute("CREATE INDEX h ON d USING HNSW (embedding) WITH (metric = 'cosine')")
    stmt = one(
        "SELECT id FROM d ORDER BY semantic_rank(embedding, 'q') DESC LIMIT 3", vector_dims=3
    )
    plan = con.execute("EXPLAIN " + stmt.bind_sql(1), [[1.0, 0.0, 0.0]]).fetchall()
    assert "HNSW_INDEX_SCAN" in "".join(str(row) for row in plan)
