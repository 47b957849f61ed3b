SELECT sum(x) AS s FROM generate_series(1, 4) AS g(x)
-- transpiled:
SELECT SUM(x) AS s FROM (SELECT CAST(generate_series AS INT) AS "x" FROM GENERATE_SERIES(1, 4)) AS "g"
-- rows:
[10]
