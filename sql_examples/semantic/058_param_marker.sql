SELECT id FROM docs WHERE semantic_match(embedding, $1) LIMIT $2
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__($1)) >= 0.7 LIMIT $2
