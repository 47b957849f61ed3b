SELECT id FROM docs WHERE semantic_match(embedding, 'invoice payment', 0.8) ORDER BY id
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('invoice payment')) >= 0.8 ORDER BY id
-- rows:
[1]
[4]
