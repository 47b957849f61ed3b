SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 5
-- transpiled:
SELECT id FROM items ORDER BY ARRAY_COSINE_DISTANCE(embedding, CAST($1 AS REAL[3])) LIMIT 5
