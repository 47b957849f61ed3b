SELECT t.id, d.title FROM tickets t JOIN_VECTOR docs d ON semantic_match(d.embedding, upper(t.customer) || ' ' || t.subject, 0.9) ORDER BY 1, 2
-- transpiled:
SELECT t.id, d.title FROM tickets AS t JOIN docs AS d ON ARRAY_COSINE_SIMILARITY(d.embedding, __HATI_EMBED__(UPPER(t.customer) || ' ' || t.subject)) >= 0.9 ORDER BY 1, 2
-- rows:
[10, "Billing FAQ"]
[10, "Refund policy"]
[11, "Account security"]
[11, "Login help"]
[12, "Shipping times"]
