SELECT id, semantic_rank(embedding, 'refund') AS score FROM docs ORDER BY score DESC LIMIT 2
-- transpiled:
SELECT id, ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('refund')) AS score FROM docs ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__('refund')) LIMIT 2
-- rows:
[1, 0.9949]
[4, 0.9824]
