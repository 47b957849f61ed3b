SELECT category, count(*) AS n FROM docs GROUP BY category HAVING max(semantic_rank(embedding, 'refund invoice')) > 0.9 ORDER BY 1
-- transpiled:
SELECT category, COUNT(*) AS n FROM docs GROUP BY category HAVING MAX(ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('refund invoice'))) > 0.9 ORDER BY 1
-- rows:
["billing", 2]
