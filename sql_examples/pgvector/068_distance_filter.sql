SELECT name FROM items WHERE embedding <=> '[1,0,0]'::vector < 0.5 ORDER BY name
-- transpiled:
SELECT name FROM items WHERE ARRAY_COSINE_DISTANCE(embedding, CAST('[1,0,0]' AS REAL[3])) < 0.5 ORDER BY name
-- rows:
["diagonal"]
["x-axis"]
