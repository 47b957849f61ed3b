SELECT 1 AS a; ; SELECT 2 AS b
-- transpiled:
SELECT 1 AS a
SELECT 2 AS b
-- rows:
[2]
