SELECT count(*) AS n FROM docs WHERE semantic_match(embedding, 'it''s a "refund"; DROP TABLE docs; --')
-- transpiled:
SELECT COUNT(*) AS n FROM docs WHERE ARRAY_COSINE_SIMILARITY(embedding, __HATI_EMBED__('it''s a "refund"; DROP TABLE docs; --')) >= __HATI_DEFAULT_THRESHOLD__()
-- rows:
[2]
