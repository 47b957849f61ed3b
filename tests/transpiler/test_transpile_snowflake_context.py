"""Snowflake detection / FLATTEN, and hatidata_context / hatidata_rag_context."""

from __future__ import annotations

import pytest

from transpiler import Marker, TranspileError, transpile
from transpiler.context import fallback_context_sql


def sql(text: str, **kw) -> str:
    return transpile(text, **kw)[0].sql


def test_snowflake_functions_are_detected_in_postgres_mode() -> None:
    text = "SELECT NVL(a, 0), IFF(a > 1, 'x', 'y') FROM t"
    assert sql(text) == sql(text, dialect="snowflake")
    assert "COALESCE(a, 0)" in sql(text)


def test_colon_path_is_detected() -> None:
    assert sql("SELECT payload:meta:p FROM t") == "SELECT payload -> '$.meta.p' FROM t"


def test_postgres_slices_are_not_snowflake() -> None:
    assert sql("SELECT a[1:2] FROM t") == "SELECT a[1:2] FROM t"


def test_flatten_becomes_lateral_unnest() -> None:
    out = sql("SELECT f.value FROM t, LATERAL FLATTEN(input => PARSE_JSON(t.j):tags) f")
    assert "CROSS JOIN LATERAL (SELECT CAST(UNNEST(CAST(JSON(t.j) -> '$.tags' AS JSON[]))" in out
    assert out.endswith("AS f")


def test_context_uses_bm25_with_id_key() -> None:
    assert sql("SELECT * FROM hatidata_context('docs', 'it''s', 3) c") == (
        "SELECT * FROM (SELECT *, fts_main_docs.match_bm25(id, 'it''s') AS score FROM docs "
        "WHERE NOT score IS NULL ORDER BY score DESC LIMIT 3) AS c"
    )


def test_rag_context_shapes() -> None:
    out = sql("SELECT * FROM hatidata_rag_context('s.kb', 'embedding', [1, 0], 4)")
    assert "CAST([1, 0] AS REAL[2])" in out and out.count("s.kb") == 1
    (stmt,) = transpile("SELECT * FROM hatidata_rag_context('kb', 'e', 'refunds', 2)")
    assert stmt.markers == (Marker("text", "refunds", "query"),) * 2
    assert "CAST($1 AS REAL[7])" in sql(
        "SELECT * FROM hatidata_rag_context('kb', 'e', $1, 2)", vector_dims=7
    )


def test_context_argument_errors() -> None:
    with pytest.raises(TranspileError) as info:
        transpile("SELECT * FROM hatidata_context(docs, 'q', 3)")
    assert info.value.sqlstate == "42883" and "table name" in info.value.message
    with pytest.raises(TranspileError):
        transpile("SELECT * FROM hatidata_rag_context('kb', 'e', [1], 'x')")


def test_table_name_cannot_inject() -> None:
    out = sql("SELECT * FROM hatidata_context('docs; DROP TABLE x', 'q', 1)")
    assert '"docs; DROP TABLE x"' in out


def test_fallback_sql() -> None:
    assert fallback_context_sql("docs", "refund it's", 2, ["title", "content"]) == (
        "SELECT * FROM (SELECT *, CAST((title ILIKE '%refund%' OR content ILIKE '%refund%') "
        "AS INT) + CAST((title ILIKE '%it''s%' OR content ILIKE '%it''s%') AS INT) AS score "
        "FROM docs) AS c WHERE score > 0 ORDER BY score DESC LIMIT 2"
    )
