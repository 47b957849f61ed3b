SELECT id FROM items ORDER BY embedding <=> '[1,0.1,0]' LIMIT 2
-- transpiled:
SELECT id FROM items ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST('[1,0.1,0]' AS REAL[3])) LIMIT 2
-- rows:
[1]
[3]
