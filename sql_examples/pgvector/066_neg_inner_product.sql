SELECT id FROM items ORDER BY embedding <#> '[1,1,0]' LIMIT 1
-- transpiled:
SELECT id FROM items ORDER BY ARRAY_NEGATIVE_INNER_PRODUCT(embedding, CAST('[1,1,0]' AS REAL[3])) LIMIT 1
-- rows:
[3]
