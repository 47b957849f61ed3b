"""Semantic calls inside other semantic calls' arguments, and search sides that are
expressions: every call is rewritten, markers come in the order the SQL shows them."""

from __future__ import annotations

import re

import duckdb
import pytest

from transpiler import Marker, Statement, transpile

_CALLS = re.compile(r"\b(semantic_match|semantic_rank|vector_match)\s*\(", re.IGNORECASE)


def one(sql: str, **kw) -> Statement:
    (stmt,) = transpile(sql, **kw)
    return stmt


def written(marker: Marker) -> str:
    """How a marker appears in Statement.sql."""
    if marker.kind == "text":
        return "__HATI_EMBED__('" + str(marker.value).replace("'", "''") + "')"
    if marker.kind == "param":
        return f"__HATI_EMBED__(${marker.value})"
    return f"__HATI_EMBED__({marker.value})"


def assert_markers_in_sql_order(stmt: Statement) -> None:
    starts = [m.start() for m in re.finditer(r"__HATI_EMBED__\(", stmt.sql)]
    assert len(starts) == len(stmt.markers)
    for start, marker in zip(starts, stmt.markers, strict=True):
        assert stmt.sql.startswith(written(marker), start), (marker, stmt.sql[start:])
    # bind_sql numbers the distinct texts in that same order: first uses are $1, $2, ...
    firsts = list(dict.fromkeys(re.findall(r"CAST\(\$(\d+) AS", stmt.bind_sql(1))))
    assert firsts == [str(k) for k in range(1, len(stmt.bind_texts) + 1)]


NESTED = [
    "SELECT semantic_rank(embedding, (SELECT q FROM qs WHERE semantic_match(qe, 'z'))) FROM t",
    "SELECT id FROM t ORDER BY semantic_rank(embedding, (SELECT q FROM qs WHERE "
    "semantic_match(q_vec, 'z'))) DESC LIMIT 3",
    "SELECT semantic_rank(embedding, (SELECT q FROM qs WHERE semantic_match(q_vec, 'z'))) AS s "
    "FROM t ORDER BY s DESC LIMIT 3",
    "SELECT id FROM t WHERE semantic_match(embedding, (SELECT q FROM qs ORDER BY "
    "semantic_rank(q_vec, 'y') DESC LIMIT 1), 0.5)",
    "SELECT semantic_rank(embedding, CASE WHEN semantic_match(embedding, 'a') THEN 'b' "
    "ELSE 'c' END) FROM t",
    "SELECT semantic_rank(embedding, coalesce((SELECT q FROM qs WHERE "
    "vector_match(q_vec, 'w', 0.2)), 'fallback')) FROM t",
    "SELECT semantic_match(embedding, (SELECT q FROM qs WHERE semantic_match(q_vec, "
    "(SELECT r FROM rs WHERE semantic_match(r_vec, 'deepest'))))) FROM t",
    "SELECT * FROM tickets t JOIN_VECTOR kb k ON semantic_match(k.embedding, (SELECT s FROM subj "
    "WHERE semantic_match(s_vec, t.subject)))",
    "SELECT semantic_rank(embedding, (SELECT title FROM hatidata_context('docs', 'refund', 1))) "
    "FROM t",
    "SELECT * FROM hatidata_rag_context('kb', 'embedding', (SELECT embedding FROM kb ORDER BY "
    "semantic_rank(embedding, 'seed') DESC LIMIT 1), 3)",
    "SELECT __HATI_EMBED__((SELECT q FROM qs WHERE semantic_match(q_vec, $1))) FROM t",
]


@pytest.mark.parametrize("sql", NESTED)
def test_nested_calls_are_all_rewritten_markers_in_order(sql: str) -> None:
    stmt = one(sql)
    assert not _CALLS.search(stmt.sql), stmt.sql
    assert "HATIDATA_CONTEXT(" not in stmt.sql.upper()
    assert stmt.markers
    assert_markers_in_sql_order(stmt)


def test_issue_example_exact_output() -> None:
    stmt = one(
        "SELECT semantic_rank(embedding, (SELECT q FROM qs WHERE semantic_match(qe, 'z'))) FROM t"
    )
    inner = (
        "SELECT q FROM qs WHERE ARRAY_COSINE_SIMILARITY(__HATI_EMBED__(qe), __HATI_EMBED__('z'))"
    )
    assert stmt.sql == (
        f"SELECT ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__(({inner} >= __HATI_DEFAULT_THRESHOLD__()))) FROM t"
    )
    assert [m.kind for m in stmt.markers] == ["column", "column", "text"]
    assert stmt.bind_texts == ("z",)


def test_nested_rank_in_order_by_through_alias_keeps_both_copies() -> None:
    stmt = one(
        "SELECT semantic_rank(embedding, (SELECT q FROM qs WHERE semantic_match(q_vec, 'z'))) AS s "
        "FROM t ORDER BY s DESC LIMIT 3"
    )
    assert stmt.sql.count("__HATI_EMBED__('z')") == 2
    assert "ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__((SELECT q" in stmt.sql
    assert stmt.bind_texts == ("z",)


EXPRESSIONS = [
    ("upper('billing')", "__HATI_EMBED__(UPPER('billing'))"),
    ("'billing ' || title", "__HATI_EMBED__('billing ' || title)"),
    ("title || ' ' || body", "__HATI_EMBED__(title || ' ' || body)"),
    ("CAST(code AS TEXT)", "__HATI_EMBED__(CAST(code AS TEXT))"),
    ("code::varchar", "__HATI_EMBED__(CAST(code AS TEXT))"),
    ("trim(both ' ' from title)", "__HATI_EMBED__(TRIM(title, ' '))"),
    ("substring(title, 1, 20)", "__HATI_EMBED__(SUBSTRING(title, 1, 20))"),
    ("(SELECT 'refund')", "__HATI_EMBED__((SELECT 'refund'))"),
    ("(SELECT title FROM docs LIMIT 1)", "__HATI_EMBED__((SELECT title FROM docs LIMIT 1))"),
    ("CASE WHEN x THEN 'a' ELSE title END", "__HATI_EMBED__(CASE WHEN x THEN 'a' ELSE title END)"),
    ("coalesce(title, 'none')", "__HATI_EMBED__(COALESCE(title, 'none'))"),
]


@pytest.mark.parametrize(("arg", "expected"), EXPRESSIONS)
def test_text_expression_search_side_is_embedded(arg: str, expected: str) -> None:
    stmt = one(f"SELECT semantic_rank(embedding, {arg}) FROM t")
    assert stmt.sql == f"SELECT ARRAY_COSINE_SIMILARITY(embedding, {expected}) FROM t"
    assert stmt.markers[0].kind == "column"
    assert_markers_in_sql_order(stmt)


VECTORS = [
    ("[0.1, 0.2, 0.3]::FLOAT[3]", "CAST([0.1, 0.2, 0.3] AS REAL[3])"),
    ("ARRAY[0.1, 0.2, 0.3]::real[]", "CAST([0.1, 0.2, 0.3] AS REAL[])"),
    ("list_value(0.1, 0.2)::FLOAT[2]", "CAST(LIST_VALUE(0.1, 0.2) AS REAL[2])"),
    ("(SELECT embedding FROM kb LIMIT 1)", "(SELECT embedding FROM kb LIMIT 1)"),
    ("embedding || other_vec", "embedding || other_vec"),
    # Cannot be told without types: passed on (the server explains DuckDB's error).
    ("nullif(title, '')", "NULLIF(title, '')"),
    ("my_function(x)", "MY_FUNCTION(x)"),
]


@pytest.mark.parametrize(("arg", "expected"), VECTORS)
def test_vector_or_unknown_search_side_is_kept(arg: str, expected: str) -> None:
    stmt = one(f"SELECT semantic_rank(embedding, {arg}) FROM t")
    assert stmt.sql == f"SELECT ARRAY_COSINE_SIMILARITY(embedding, {expected}) FROM t"
    assert stmt.markers == ()


def test_text_expression_stored_side_and_user_marker() -> None:
    stmt = one("SELECT id FROM t WHERE semantic_match(lower(body), 'x')")
    assert "ARRAY_COSINE_SIMILARITY(__HATI_EMBED__(LOWER(body)), __HATI_EMBED__('x'))" in stmt.sql
    user = one("SELECT __HATI_EMBED__(upper(title)) FROM t")
    assert user.markers == (Marker("column", "UPPER(title)", "passage"),)


def test_nested_statement_runs_in_duckdb() -> None:
    con = duckdb.connect()
    con.create_function("__HATI_EMBED__", _fake, ["VARCHAR"], "FLOAT[2]", side_effects=False)
    con.execute("CREATE TABLE t (id INT, embedding FLOAT[2])")
    con.execute("INSERT INTO t VALUES (1, [1, 0]), (2, [0, 1])")
    con.execute("CREATE TABLE qs (q VARCHAR, q_vec FLOAT[2])")
    con.execute("INSERT INTO qs VALUES ('bill', [1, 0]), ('ship', [0, 1])")
    stmt = one(
        "SELECT id FROM t WHERE semantic_match(embedding, (SELECT q FROM qs WHERE "
        "semantic_match(q_vec, 'ship', 0.9)), 0.9)",
        vector_dims=2,
    )
    params = [_fake(text) for text in stmt.bind_texts]
    assert con.execute(stmt.bind_sql(1), params).fetchall() == [(2,)]


def _fake(text: str) -> list[float]:
    return [1.0, 0.0] if "bill" in text else [0.0, 1.0]
