SELECT '[1,2,3]'::vector AS v, '[1,2]'::vector(2) AS w
-- transpiled:
SELECT CAST('[1,2,3]' AS REAL[3]) AS v, CAST('[1,2]' AS REAL[2]) AS w
-- rows:
[[1.0, 2.0, 3.0], [1.0, 2.0]]
