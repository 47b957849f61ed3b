SELECT t.id AS ticket, d.id AS doc FROM tickets t JOIN_VECTOR docs d ON semantic_match(d.embedding, t.subject, 0.9) ORDER BY 1, 2
-- transpiled:
SELECT t.id AS ticket, d.id AS doc FROM tickets AS t JOIN docs AS d ON ARRAY_COSINE_SIMILARITY(d.embedding, __HATI_EMBED__(t.subject)) >= 0.9 ORDER BY 1, 2
-- rows:
[10, 1]
[10, 4]
[11, 2]
[11, 5]
[12, 3]
