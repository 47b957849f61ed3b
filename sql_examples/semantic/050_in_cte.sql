WITH hits AS (SELECT id, category FROM docs WHERE semantic_match(embedding, 'account login')) SELECT category, count(*) AS n FROM hits GROUP BY category
-- transpiled:
WITH hits AS (SELECT id, category FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('account login')) >= __HATI_DEFAULT_THRESHOLD__()) SELECT category, COUNT(*) AS n FROM hits GROUP BY category
-- rows:
["account", 2]
