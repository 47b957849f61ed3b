"""Rewrites the Arrow-native drivers (ADBC, ConnectorX) and Peewee need: COPY's query
transpiled as a SELECT, regproc catalog columns compared with 0, `JOIN unnest(a) AS s`
naming its column, `FROM generate_subscripts(a, n)` as a derived table."""

from __future__ import annotations

import pytest

from transpiler import transpile


def sql(text: str) -> str:
    return transpile(text)[0].sql


@pytest.mark.parametrize(
    ("pg", "duck"),
    [
        (
            "COPY (SELECT 2.5::numeric, 1/0) TO STDOUT (FORMAT binary)",
            "COPY (SELECT CAST(2.5 AS DECIMAL(38, 10)), __hati_catalog.pg.__hati_div(1, 0))"
            " TO STDOUT (FORMAT binary)",
        ),
        (
            "copy ( select i from t where i = ANY('{1,2}') ) to stdout with binary",
            "copy (SELECT i FROM t WHERE i IN ('1', '2')) to stdout with binary",
        ),
        ("COPY t (a, b) TO STDOUT", "COPY t (a, b) TO STDOUT"),  # a table: as written
        ("COPY t FROM STDIN (FORMAT binary)", "COPY t FROM STDIN (FORMAT binary)"),
        (
            "SELECT typname FROM pg_type WHERE typreceive != 0 OR 0 = typsend",
            "SELECT typname FROM pg_type WHERE COALESCE(typreceive, '-') <> '-'"
            " OR COALESCE(typsend, '-') = '-'",
        ),
        (  # another number names no function here: as written
            "SELECT typname FROM pg_type WHERE typinput = 42",
            "SELECT typname FROM pg_type WHERE typinput = 42",
        ),
        (
            "SELECT k FROM t CROSS JOIN UNNEST(t.a) AS k WHERE k > 1",
            "SELECT k FROM t CROSS JOIN UNNEST(t.a) AS k(k) WHERE k > 1",
        ),
        (  # a select-list unnest after a comma keeps its alias as written
            "SELECT a, unnest(b) AS x FROM t",
            "SELECT a, UNNEST(b) AS x FROM t",
        ),
        (
            "SELECT k FROM generate_subscripts(ARRAY[5, 6], 1) AS k",
            "SELECT k FROM (SELECT CAST(GENERATE_SUBSCRIPTS([5, 6], 1) AS INT)"
            " AS generate_subscripts) AS k(k)",
        ),
        (  # int2vector subscripts count from 0, in FROM too
            "SELECT k FROM pg_index i, generate_subscripts(i.indkey, 1) AS k",
            "SELECT k FROM pg_index AS i, (SELECT CAST((GENERATE_SUBSCRIPTS(i.indkey, 1) - 1)"
            " AS INT) AS generate_subscripts) AS k(k)",
        ),
    ],
)
def test_rewrites(pg: str, duck: str) -> None:
    assert sql(pg) == duck
