"""EXPLAIN [ANALYZE] <query>: the query inside is transpiled, the prefix kept."""

from transpiler import transpile


def test_explain_rewrites_semantic_functions_inside() -> None:
    (st,) = transpile(
        "EXPLAIN SELECT id FROM docs ORDER BY semantic_rank(embedding, 'b') DESC LIMIT 2"
    )
    assert st.kind == "explain" and st.tag == "EXPLAIN"
    assert st.sql.startswith("EXPLAIN SELECT")
    assert "ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__('b'))" in st.sql
    assert st.bind_texts == ("b",)
    assert st.bind_sql(1).startswith("EXPLAIN SELECT")
    assert "CAST($1 AS FLOAT[384])" in st.bind_sql(1)


def test_explain_analyze_and_plain_queries() -> None:
    (st,) = transpile("explain analyze select * from public.t")
    assert st.sql == "explain analyze SELECT * FROM main.t"
    (plain,) = transpile("EXPLAIN SELECT 1")
    assert plain.kind == "explain" and plain.markers == ()


def test_explain_parameters_are_the_querys() -> None:
    from transpiler import infer_param_types

    (st,) = transpile("EXPLAIN ANALYZE SELECT b FROM t WHERE a = $1")
    types = {("t", "a"): "INTEGER"}
    assert infer_param_types(st, lambda _s, t, c: types.get((t, c))) == {1: "INTEGER"}
