SELECT id, semantic_rank(embedding, (SELECT subject FROM tickets ORDER BY semantic_rank(subject, 'password') DESC LIMIT 1)) AS s FROM docs ORDER BY s DESC LIMIT 2
-- transpiled:
SELECT id, ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__((SELECT subject FROM tickets ORDER BY ARRAY_COSINE_DISTANCE(__HATI_EMBED__(subject), __HATI_EMBED__('password')) LIMIT 1))) AS s FROM docs ORDER BY ARRAY_COSINE_DISTANCE(embedding, __HATI_EMBED__((SELECT subject FROM tickets ORDER BY ARRAY_COSINE_DISTANCE(__HATI_EMBED__(subject), __HATI_EMBED__('password')) LIMIT 1))) LIMIT 2
-- rows:
[2, 0.9955]
[5, 0.9944]
