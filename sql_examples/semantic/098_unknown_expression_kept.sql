SELECT id FROM docs WHERE semantic_match(embedding, nullif(title, '')) OR semantic_match(embedding, CAST(nullif(title, '') AS TEXT))
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, NULLIF(title, '')) >= __HATI_DEFAULT_THRESHOLD__() OR ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__(CAST(NULLIF(title, '') AS TEXT))) >= __HATI_DEFAULT_THRESHOLD__()
