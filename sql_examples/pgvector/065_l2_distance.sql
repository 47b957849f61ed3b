SELECT id, round(embedding <-> '[0,0,0]'::vector, 4) AS d FROM items ORDER BY id
-- transpiled:
SELECT id, ROUND(ARRAY_DISTANCE(embedding, CAST('[0,0,0]' AS REAL[3])), 4) AS d FROM items ORDER BY id
-- rows:
[1, 1.0]
[2, 1.0]
[3, 1.4142]
[4, 1.0]
