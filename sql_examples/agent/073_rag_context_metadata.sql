SELECT r.content, r.metadata FROM hatidata_rag_context('langchain_store', 'embedding', [0, 1, 0], 1) AS r
-- transpiled:
SELECT r.content, r.metadata FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST([0, 1, 0] AS REAL[3])) AS similarity FROM langchain_store ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST([0, 1, 0] AS REAL[3])) LIMIT 1) AS r
-- rows:
["customer forgot password twice", "{\"source\": \"support\"}"]
