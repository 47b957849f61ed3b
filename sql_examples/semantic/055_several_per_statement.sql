SELECT id FROM docs WHERE semantic_match(embedding, 'billing') OR semantic_match(embedding, 'shipping') ORDER BY id
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('billing')) >= __HATI_DEFAULT_THRESHOLD__() OR ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('shipping')) >= __HATI_DEFAULT_THRESHOLD__() ORDER BY id
-- rows:
[1]
[3]
[4]
