"""pgvector types, literals and operators."""

from __future__ import annotations

import pytest

from transpiler import ColumnHints, transpile
from transpiler.pgvector import vector_literal_size


def sql(text: str, dims: int = 384) -> str:
    return transpile(text, vector_dims=dims)[0].sql


def test_vector_type() -> None:
    assert sql("CREATE TABLE t (e vector(3), f vector)", dims=8) == (
        "CREATE TABLE t (e REAL[3], f REAL[8])"
    )


def test_spaceship_is_cosine_distance_not_null_safe_equality() -> None:
    out = sql("SELECT a <=> b FROM t")
    assert out == "SELECT ARRAY_COSINE_DISTANCE(a, b) FROM t"
    assert "DISTINCT" not in out


def test_l2_and_inner_product() -> None:
    assert sql("SELECT a <-> b, a <#> b FROM t") == (
        "SELECT ARRAY_DISTANCE(a, b), ARRAY_NEGATIVE_INNER_PRODUCT(a, b) FROM t"
    )


def test_bare_string_and_param_operands_are_cast() -> None:
    assert sql("SELECT id FROM t ORDER BY e <=> '[1, 2.5, -3e-2]' LIMIT 5") == (
        "SELECT id FROM t ORDER BY ARRAY_COSINE_DISTANCE(e, CAST('[1, 2.5, -3e-2]' AS REAL[3])) "
        "LIMIT 5"
    )
    assert sql("SELECT e <-> $1 FROM t", dims=4) == (
        "SELECT ARRAY_DISTANCE(e, CAST($1 AS REAL[4])) FROM t"
    )


def test_vector_literal_cast_sized_from_literal() -> None:
    assert sql("SELECT '[1,2,3]'::vector") == "SELECT CAST('[1,2,3]' AS REAL[3])"


def test_vector_literal_casts_sized_or_explicit() -> None:
    assert sql("SELECT CAST('[1,2,3]' AS vector(3))") == "SELECT CAST('[1,2,3]' AS REAL[3])"
    assert sql("SELECT CAST(' [1.0, 0.0, -5e-1] ' AS vector)") == (
        "SELECT CAST(' [1.0, 0.0, -5e-1] ' AS REAL[3])"
    )


def test_unsized_vector_cast_of_parameter_takes_bound_length() -> None:
    # pgvector's '$1::vector' has no size: stored or compared, a list DuckDB casts to the
    # column's FLOAT[n].
    assert sql("INSERT INTO t VALUES ($1, $2::vector)") == (
        "INSERT INTO t VALUES ($1, CAST($2 AS REAL[]))"
    )
    assert sql("UPDATE t SET e = CAST($1 AS vector) WHERE id = $2") == (
        "UPDATE t SET e = CAST($1 AS REAL[]) WHERE id = $2"
    )
    assert (
        sql("INSERT INTO t VALUES ($1::vector(3))") == "INSERT INTO t VALUES (CAST($1 AS REAL[3]))"
    )
    assert sql("INSERT INTO t VALUES ($1::text::vector)") == (
        "INSERT INTO t VALUES (CAST(CAST($1 AS TEXT) AS REAL[]))"
    )
    assert sql("SELECT array_cosine_similarity(e, $1::vector) FROM t", dims=8) == (
        "SELECT ARRAY_COSINE_SIMILARITY(e, CAST($1 AS REAL[8])) FROM t"
    )
    assert sql(
        "SELECT * FROM t ORDER BY semantic_rank(embedding, $1::vector) DESC LIMIT 3", dims=8
    ) == ("SELECT * FROM t ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST($1 AS REAL[8])) LIMIT 3")
    # Function arguments and distance operands need a fixed size: FLOAT[vector_dims].
    assert sql("SELECT e <-> $1::vector FROM t", dims=8) == (
        "SELECT ARRAY_DISTANCE(e, CAST($1 AS REAL[8])) FROM t"
    )


def test_duckdb_float_array_type_is_kept_four_byte() -> None:
    assert sql("CREATE TABLE t (e FLOAT[3], p float)") == "CREATE TABLE t (e REAL[3], p DOUBLE)"
    assert sql("SELECT [1, 2]::FLOAT[2]") == "SELECT CAST([1, 2] AS REAL[2])"


@pytest.mark.parametrize(
    ("text", "size"),
    [("[1,2,3]", 3), (" [0.5] ", 1), ("[1e3, -2]", 2), ("[]", None), ("[a]", None), ("1,2", None)],
)
def test_vector_literal_size(text: str, size: int | None) -> None:
    assert vector_literal_size(text) == size


def test_distance_parameter_takes_the_column_size_from_hints() -> None:
    hints = ColumnHints({"items": {"e": "vector"}}, vector_sizes={"items": {"e": 3}})

    def out(text: str) -> str:
        return transpile(text, hints=hints)[0].sql

    assert out("SELECT id FROM items ORDER BY e <-> $1 LIMIT 3") == (
        "SELECT id FROM items ORDER BY ARRAY_DISTANCE(e, CAST($1 AS REAL[3])) LIMIT 3"
    )
    assert "ARRAY_COSINE_DISTANCE(e, CAST($1 AS REAL[3]))" in out(
        "SELECT id FROM items ORDER BY e <=> $1::vector"
    )
    assert "ARRAY_NEGATIVE_INNER_PRODUCT(CAST($1 AS REAL[3]), i.e)" in out(
        "SELECT id FROM items AS i ORDER BY $1 <#> i.e"
    )
    # A column the hints do not know: the model's size, as before.
    assert "CAST($1 AS REAL[384])" in out("SELECT id FROM other ORDER BY e <-> $1")
