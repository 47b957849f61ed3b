SELECT id, content FROM langchain_store WHERE semantic_match(embedding, 'invoice email', 0.5) ORDER BY semantic_rank(embedding, 'invoice email') DESC LIMIT 3
-- transpiled:
SELECT id, content FROM langchain_store WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('invoice email')) >= 0.5 ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__('invoice email')) LIMIT 3
-- rows:
["m1", "customer prefers invoice by email"]
