SELECT id FROM docs WHERE vector_match(embedding, 'password login') ORDER BY id
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('password login')) >= __HATI_DEFAULT_THRESHOLD__() ORDER BY id
-- rows:
[2]
[5]
