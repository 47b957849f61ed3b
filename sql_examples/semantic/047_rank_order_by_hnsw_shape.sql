SELECT id, title FROM docs ORDER BY semantic_rank(embedding, 'delivery of my package') DESC LIMIT 2
-- transpiled:
SELECT id, title FROM docs ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__('delivery of my package')) LIMIT 2
-- rows:
[3, "Shipping times"]
[4, "Refund policy"]
