SELECT id, title FROM hatidata_context('docs', 'refund', 2)
-- transpiled:
SELECT id, title FROM (SELECT *, fts_main_docs.match_bm25(id, 'refund') AS score FROM docs WHERE NOT score IS NULL ORDER BY score DESC LIMIT 2) AS hatidata_context
-- rows:
[4, "Refund policy"]
[1, "Billing FAQ"]
