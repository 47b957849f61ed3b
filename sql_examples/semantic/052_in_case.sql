SELECT id, CASE WHEN semantic_match(embedding, 'billing') THEN 'billing' ELSE 'other' END AS kind FROM docs ORDER BY id
-- transpiled:
SELECT id, CASE WHEN (ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('billing')) >= __HATI_DEFAULT_THRESHOLD__()) THEN 'billing' ELSE 'other' END AS kind FROM docs ORDER BY id
-- rows:
[1, "billing"]
[2, "other"]
[3, "other"]
[4, "billing"]
[5, "other"]
