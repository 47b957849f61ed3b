SELECT id FROM docs WHERE semantic_match(embedding, $1) LIMIT $2
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__($1)) >= __HATI_DEFAULT_THRESHOLD__() LIMIT $2
