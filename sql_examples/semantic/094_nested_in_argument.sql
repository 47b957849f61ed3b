SELECT title FROM docs WHERE semantic_match(embedding, (SELECT subject FROM tickets WHERE semantic_match(subject, 'shipping', 0.9)), 0.9) ORDER BY 1
-- transpiled:
SELECT title FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__((SELECT subject FROM tickets WHERE ARRAY_COSINE_SIMILARITY(__HATI_EMBED__(subject), __HATI_EMBED__('shipping')) >= 0.9))) >= 0.9 ORDER BY 1
-- rows:
["Shipping times"]
