"""ORDER BY a bare name finds an output column of that PostgreSQL name first
(transpiler/order_by_output.py)."""

from __future__ import annotations

import pytest

from transpiler import transpile
from transpiler.errors import TranspileError


@pytest.mark.parametrize(
    ("sql", "order_by"),
    [
        ("SELECT m::text FROM t ORDER BY m", "ORDER BY 1"),
        ("SELECT a, M::text FROM t ORDER BY m DESC", "ORDER BY 2 DESC"),
        ("SELECT upper(n) FROM t ORDER BY upper", "ORDER BY 1"),
        ("SELECT m::text FROM t UNION SELECT 'x' ORDER BY m", "ORDER BY 1"),
        ("SELECT m::text AS m FROM t ORDER BY m", "ORDER BY m"),  # DuckDB takes the alias
        ("SELECT m FROM t ORDER BY m", "ORDER BY m"),
        ("SELECT m::text FROM t ORDER BY t.m", "ORDER BY t.m"),  # qualified: the input
        ("SELECT m::text FROM t ORDER BY m + 1", "ORDER BY m + 1"),
        ("SELECT DISTINCT ON (m) m::text FROM t ORDER BY m", "ORDER BY m"),
        ("SELECT *, m::text FROM t ORDER BY m", "ORDER BY m"),  # `*` may hold an m too
        ("SELECT count(*) FROM t GROUP BY n ORDER BY count", "ORDER BY 1"),
    ],
)
def test_order_by_output_name(sql: str, order_by: str) -> None:
    assert order_by in transpile(sql)[0].sql


def test_two_output_columns_of_the_name_are_ambiguous() -> None:
    with pytest.raises(TranspileError) as info:
        transpile("SELECT m::text, m FROM t ORDER BY m")
    assert (info.value.sqlstate, info.value.message) == ("42702", 'ORDER BY "m" is ambiguous')


def test_the_same_column_twice_is_not_ambiguous() -> None:
    assert transpile("SELECT t.id, id FROM t ORDER BY id")[0].sql.endswith("ORDER BY id")


def test_an_output_name_over_a_vector_distance() -> None:
    # LangChain / LlamaIndex: `embedding <=> $1 AS distance ... ORDER BY distance` (the
    # distance has no PostgreSQL text in sqlglot: the match compares trees, not text)
    (st,) = transpile(
        "SELECT id, embedding <=> '[1,2,3]' AS distance FROM t ORDER BY distance LIMIT 2"
    )
    assert "ORDER BY" in st.sql and "ARRAY_COSINE_DISTANCE" in st.sql
