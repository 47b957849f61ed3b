SELECT id FROM docs WHERE semantic_match(embedding, nullif(title, '')) OR semantic_match(embedding, CAST(nullif(title, '') AS TEXT))
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, NULLIF(title, '')) >= 0.7 OR ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__(CAST(NULLIF(title, '') AS TEXT))) >= 0.7
