SELECT id, row_number() OVER (PARTITION BY category ORDER BY semantic_rank(embedding, 'login') DESC) AS r FROM docs WHERE category = 'account' ORDER BY id
-- transpiled:
SELECT id, ROW_NUMBER() OVER (PARTITION BY category ORDER BY ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('login')) DESC NULLS FIRST) AS r FROM docs WHERE category = 'account' ORDER BY id
-- rows:
[2, 1]
[5, 2]
