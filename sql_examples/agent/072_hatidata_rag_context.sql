SELECT id, content, round(similarity, 3) AS similarity FROM hatidata_rag_context('langchain_store', 'embedding', [1.0, 0.0, 0.0], 2)
-- transpiled:
SELECT id, content, ROUND(similarity, 3) AS similarity FROM (SELECT *, ARRAY_COSINE_SIMILARITY(embedding, CAST([1.0, 0.0, 0.0] AS REAL[3])) AS similarity FROM langchain_store ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST([1.0, 0.0, 0.0] AS REAL[3])) LIMIT 2) AS hatidata_rag_context
-- rows:
["m1", "customer prefers invoice by email", 0.999]
["m2", "customer forgot password twice", 0.0]
