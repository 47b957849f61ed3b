SELECT id, round(semantic_rank(embedding, 'refund'), 3) AS score FROM docs ORDER BY score DESC LIMIT 2
-- transpiled:
SELECT id, ROUND(ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('refund')), 3) AS score FROM docs ORDER BY score DESC NULLS FIRST LIMIT 2
