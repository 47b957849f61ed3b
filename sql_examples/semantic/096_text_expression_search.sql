SELECT id FROM docs WHERE semantic_match(embedding, 'refund ' || category, 0.9) ORDER BY id
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('refund ' || category)) >= 0.9 ORDER BY id
-- rows:
[1]
[4]
