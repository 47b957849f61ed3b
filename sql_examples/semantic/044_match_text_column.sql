SELECT id FROM docs WHERE semantic_match(content, 'billing refund') ORDER BY id
-- transpiled:
SELECT id FROM docs WHERE ARRAY_COSINE_SIMILARITY(__HATI_EMBED__(content), __HATI_EMBED__('billing refund')) >= __HATI_DEFAULT_THRESHOLD__() ORDER BY id
-- rows:
[1]
[4]
