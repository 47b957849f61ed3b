SELECT sum(x) AS s FROM generate_series(1, 4) AS g(x)
-- transpiled:
SELECT SUM(x) AS s FROM GENERATE_SERIES(1, 4) AS g(x)
-- rows:
[10]
