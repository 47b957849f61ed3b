"""hatidata_context / hatidata_rag_context expansions (ContextScan, rendered from fixed
text around generated parts) give exactly what the full SELECT tree rendered before it:
the expected values below were produced by that implementation."""

from __future__ import annotations

import pytest

from transpiler import transpile

# (input, sql, markers (kind, value, role), bind_sql(7), external_access)
CASES = [
    (
        "SELECT id, title FROM hatidata_context('docs', 'refund', 2)",
        "SELECT id, title FROM (SELECT *, fts_main_docs.match_bm25(id, 'refund') AS score FROM docs WHERE NOT score IS NULL ORDER BY score DESC LIMIT 2) AS hatidata_context",
        [],
        "SELECT id, title FROM (SELECT *, fts_main_docs.match_bm25(id, 'refund') AS score FROM docs WHERE NOT score IS NULL ORDER BY score DESC LIMIT 2) AS hatidata_context",
        [],
    ),
    (
        "SELECT * FROM hatidata_context('public.docs', 'it''s a \"test\"', $1) AS c",
        "SELECT * FROM (SELECT *, fts_main_docs.match_bm25(id, 'it''s a \"test\"') AS score FROM main.docs WHERE NOT score IS NULL ORDER BY score DESC LIMIT $1) AS c",
        [],
        "SELECT * FROM (SELECT *, fts_main_docs.match_bm25(id, 'it''s a \"test\"') AS score FROM main.docs WHERE NOT score IS NULL ORDER BY score DESC LIMIT $1) AS c",
        [],
    ),
    (
        "SELECT c.id FROM hatidata_context('My Docs', 'x') c(id, t) JOIN other o ON o.id = c.id",
        'SELECT c.id FROM (SELECT *, "fts_main_My Docs".match_bm25(id, \'x\') AS score FROM "My Docs" WHERE NOT score IS NULL ORDER BY score DESC LIMIT 5) AS c(id, t) JOIN other AS o ON o.id = c.id',
        [],
        'SELECT c.id FROM (SELECT *, "fts_main_My Docs".match_bm25(id, \'x\') AS score FROM "My Docs" WHERE NOT score IS NULL ORDER BY score DESC LIMIT 5) AS c(id, t) JOIN other AS o ON o.id = c.id',
        [],
    ),
    (
        "SELECT * FROM hatidata_rag_context('kb', 'embedding', [0.1, 0.2, 0.3], 3)",
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST([0.1, 0.2, 0.3] AS REAL[3])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST([0.1, 0.2, 0.3] AS REAL[3])) LIMIT 3) AS hatidata_rag_context",
        [],
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST([0.1, 0.2, 0.3] AS REAL[3])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST([0.1, 0.2, 0.3] AS REAL[3])) LIMIT 3) AS hatidata_rag_context",
        [],
    ),
    (
        "SELECT * FROM hatidata_rag_context('s.kb', 'Emb Col', $2, $1) AS r",
        'SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY("Emb Col", CAST($2 AS REAL[3])) AS similarity FROM s.kb ORDER BY ARRAY_COSINE_DISTANCE("Emb Col", CAST($2 AS REAL[3])) LIMIT $1) AS r',
        [],
        'SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY("Emb Col", CAST($2 AS REAL[3])) AS similarity FROM s.kb ORDER BY ARRAY_COSINE_DISTANCE("Emb Col", CAST($2 AS REAL[3])) LIMIT $1) AS r',
        [],
    ),
    (
        "SELECT * FROM hatidata_rag_context('kb', 'embedding', '[1,2,3]', 4)",
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST('[1,2,3]' AS REAL[3])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST('[1,2,3]' AS REAL[3])) LIMIT 4) AS hatidata_rag_context",
        [],
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST('[1,2,3]' AS REAL[3])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST('[1,2,3]' AS REAL[3])) LIMIT 4) AS hatidata_rag_context",
        [],
    ),
    (
        "SELECT * FROM hatidata_rag_context('kb', 'embedding', 'billing question', 4) x",
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('billing question')) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__('billing question')) LIMIT 4) AS x",
        [("text", "billing question", "query"), ("text", "billing question", "query")],
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST($7 AS FLOAT[3])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST($7 AS FLOAT[3])) LIMIT 4) AS x",
        [],
    ),
    (
        "SELECT * FROM hatidata_rag_context('kb', 'embedding', CAST($1 AS FLOAT[3]), 4)",
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST($1 AS REAL[3])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST($1 AS REAL[3])) LIMIT 4) AS hatidata_rag_context",
        [],
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST($1 AS REAL[3])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST($1 AS REAL[3])) LIMIT 4) AS hatidata_rag_context",
        [],
    ),
    (
        "SELECT * FROM hatidata_rag_context('kb', 'embedding', [-1, 2e-3], 1), hatidata_context('d', 'q', 1)",
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST([-1, 2e-3] AS REAL[2])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST([-1, 2e-3] AS REAL[2])) LIMIT 1) AS hatidata_rag_context, (SELECT *, fts_main_d.match_bm25(id, 'q') AS score FROM d WHERE NOT score IS NULL ORDER BY score DESC LIMIT 1) AS hatidata_context",
        [],
        "SELECT * FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST([-1, 2e-3] AS REAL[2])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST([-1, 2e-3] AS REAL[2])) LIMIT 1) AS hatidata_rag_context, (SELECT *, fts_main_d.match_bm25(id, 'q') AS score FROM d WHERE NOT score IS NULL ORDER BY score DESC LIMIT 1) AS hatidata_context",
        [],
    ),
    (
        "SELECT * FROM t WHERE id IN (SELECT id FROM hatidata_context('docs', 'refund', 5))",
        "SELECT * FROM t WHERE id IN (SELECT id FROM (SELECT *, fts_main_docs.match_bm25(id, 'refund') AS score FROM docs WHERE NOT score IS NULL ORDER BY score DESC LIMIT 5) AS hatidata_context)",
        [],
        "SELECT * FROM t WHERE id IN (SELECT id FROM (SELECT *, fts_main_docs.match_bm25(id, 'refund') AS score FROM docs WHERE NOT score IS NULL ORDER BY score DESC LIMIT 5) AS hatidata_context)",
        [],
    ),
    (
        "SELECT r.id FROM hatidata_rag_context('public.kb', 'e', 'q', 2) r WHERE r.id::regclass IS NOT NULL",
        "SELECT r.id FROM (SELECT *, ARRAY_COSINE_SIMILARITY(e, __HATI_EMBED__('q')) AS similarity FROM main.kb ORDER BY ARRAY_COSINE_DISTANCE(e, __HATI_EMBED__('q')) LIMIT 2) AS r WHERE __HATI_REGCLASS_NAME(r.id) IS NOT NULL",
        [("text", "q", "query"), ("text", "q", "query")],
        "SELECT r.id FROM (SELECT *, ARRAY_COSINE_SIMILARITY(e, CAST($7 AS FLOAT[3])) AS similarity FROM main.kb ORDER BY ARRAY_COSINE_DISTANCE(e, CAST($7 AS FLOAT[3])) LIMIT 2) AS r WHERE __HATI_REGCLASS_NAME(r.id) IS NOT NULL",
        [],
    ),
    (
        "SELECT * FROM docs d JOIN hatidata_rag_context('kb', 'embedding', 'refund', 2) r ON r.id = d.id WHERE semantic_match(d.embedding, 'x')",
        "SELECT * FROM docs AS d JOIN (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('refund')) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__('refund')) LIMIT 2) AS r ON r.id = d.id WHERE ARRAY_COSINE_SIMILARITY(d.embedding, __HATI_EMBED__('x')) >= __HATI_DEFAULT_THRESHOLD__()",
        [("text", "refund", "query"), ("text", "refund", "query"), ("text", "x", "query")],
        "SELECT * FROM docs AS d JOIN (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST($7 AS FLOAT[3])) AS similarity FROM kb ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST($7 AS FLOAT[3])) LIMIT 2) AS r ON r.id = d.id WHERE ARRAY_COSINE_SIMILARITY(d.embedding, CAST($8 AS FLOAT[3])) >= __HATI_DEFAULT_THRESHOLD__()",
        [],
    ),
]


@pytest.mark.parametrize("sql, expected, markers, bound, outside", CASES)
def test_expansion_matches_tree_rendering(sql, expected, markers, bound, outside) -> None:
    (stmt,) = transpile(sql, vector_dims=3)
    assert stmt.sql == expected
    assert [(m.kind, m.value, m.role) for m in stmt.markers] == markers
    assert stmt.bind_sql(7) == bound
    assert list(stmt.external_access) == outside
