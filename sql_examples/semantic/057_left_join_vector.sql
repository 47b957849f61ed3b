SELECT t.id AS ticket, d.title FROM tickets t LEFT JOIN_VECTOR docs d ON semantic_match(d.embedding, t.subject, 0.99) ORDER BY 1, 2
-- transpiled:
SELECT t.id AS ticket, d.title FROM tickets AS t LEFT JOIN docs AS d ON ARRAY_COSINE_SIMILARITY(d.embedding, __HATI_EMBED__(t.subject)) >= 0.99 ORDER BY 1, 2
-- rows:
[10, "Billing FAQ"]
[11, "Account security"]
[11, "Login help"]
[12, "Shipping times"]
