"""Hypothesis: any text inside a semantic function round-trips exactly into the marker
list and stays a single string literal in the output (no injection)."""

from __future__ import annotations

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from transpiler import Marker, transpile
from transpiler.dialects import DUCKDB

# NUL-free text, biased towards SQL metacharacters.
texts = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("'\"\\$;-/*()\n\r\t`%_ ")),
        st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
    ),
    max_size=40,
)


def pg_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def check(sql: str, text: str) -> None:
    (stmt,) = transpile(sql, vector_dims=3)
    assert [m for m in stmt.markers if m.kind == "text"] == [Marker("text", text, "query")]
    tree = DUCKDB.parse(stmt.sql)[0]
    # The only string constant is the marker argument, equal to the text.
    strings = [lit.this for lit in tree.find_all(exp.Literal) if lit.is_string]
    assert strings == [text]
    calls = [a for a in tree.find_all(exp.Anonymous) if a.name.upper() == "__HATI_EMBED__"]
    assert len(calls) == 1 and calls[0].expressions[0].this == text
    # The bound form has no text left at all and DuckDB parses it.
    bound = stmt.bind_sql(1)
    assert "CAST($1 AS FLOAT[3])" in bound


@settings(max_examples=300, deadline=None)
@given(texts)
def test_standard_string_literal(text: str) -> None:
    check(f"SELECT id FROM docs WHERE semantic_match(embedding, {pg_literal(text)})", text)


@settings(max_examples=200, deadline=None)
@given(texts.filter(lambda t: "$q$" not in t and not t.endswith("$")))
def test_dollar_quoted_literal(text: str) -> None:
    check(f"SELECT semantic_rank(embedding, $q${text}$q$) FROM docs", text)


@settings(max_examples=200, deadline=None)
@given(texts)
def test_escape_string_literal(text: str) -> None:
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    check(f"SELECT 1 FROM docs WHERE vector_match(embedding, E'{escaped}', 0.5)", text)


@settings(max_examples=100, deadline=None)
@given(texts)
def test_duckdb_runs_output_with_hostile_text(text: str) -> None:
    (stmt,) = transpile(
        f"SELECT {pg_literal(text)} AS t, semantic_match(embedding, {pg_literal(text)}) AS m FROM d",
        vector_dims=3,
    )
    con = duckdb.connect()
    # what the server registers: the model's default threshold (no threshold written)
    con.create_function("__HATI_DEFAULT_THRESHOLD__", lambda: 0.7, [], "DOUBLE")
    con.execute("CREATE TABLE d (embedding FLOAT[3])")
    con.execute("INSERT INTO d VALUES ([1, 0, 0])")
    rows = con.execute(stmt.bind_sql(1), [[1.0, 0.0, 0.0]]).fetchall()
    assert rows == [(text, True)]
    assert con.execute("SELECT count(*) FROM d").fetchall() == [(1,)]
