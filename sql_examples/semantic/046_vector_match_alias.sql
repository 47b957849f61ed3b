SELECT id FROM docs WHERE vector_match(embedding, 'password login') ORDER BY id
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('password login')) >= 0.7 ORDER BY id
-- rows:
[2]
[5]
