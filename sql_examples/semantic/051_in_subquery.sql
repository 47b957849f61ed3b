SELECT title FROM docs WHERE id IN (SELECT id FROM docs WHERE semantic_match(embedding, 'shipping delivery')) ORDER BY 1
-- transpiled:
SELECT title FROM docs WHERE id IN (SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('shipping delivery')) >= __HATI_DEFAULT_THRESHOLD__()) ORDER BY 1
-- rows:
["Shipping times"]
